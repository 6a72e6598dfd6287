#!/usr/bin/env node
import '../dist/cli/launch.js';
