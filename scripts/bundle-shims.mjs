// Injected into the build's bundles (esbuild's `inject`, which keeps the bundle's "use strict" first,
// where a banner would come before it and leave the whole bundle in sloppy mode): what the bundled
// modules use in place of import.meta.url. In a bundle, __filename and __dirname are those of the
// CommonJS wrapper it runs in (src/shared/bundle-script.ts): the bundle's own file.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The bundle's URL: the service thread's modules all lie beside its bundle. */
export const __casImportMetaUrl = pathToFileURL(__filename).href;

/** The URL of a module of dist/, from its path relative to the bundle (the CLI's bundle). */
export const __casFileUrl = (path) => pathToFileURL(join(__dirname, path)).href;
