/** Kept equal to package.json's version by src/shared/version.test.ts (the bundle cannot read package.json). */
export const VERSION = '0.1.0';
