import { afterAll } from 'vitest';
import { killAllChildren } from './processes.js';

// Integration files share their worker's modules (vitest.config.ts), so processes.ts is evaluated
// once per worker; this file runs before each test file and gives each its own clean-up.
afterAll(killAllChildren);
