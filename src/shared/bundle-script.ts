import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Script } from 'node:vm';

/**
 * Runs a one-file CommonJS bundle the build made (scripts/bundle-cli.mjs, scripts/bundle-worker.mjs)
 * through V8 with the code cache the build recorded beside it, so a process starts without resolving
 * hundreds of modules and compiling megabytes of JavaScript again. Node 20 has no compile cache of
 * its own (`module.enableCompileCache` is Node 22), and an ES module cannot be given one, hence
 * CommonJS and `vm.Script`. A cache V8 refuses (another Node, other V8 flags, another bundle) or one
 * that is missing only costs the compile it would have saved. The caller applies the CLI's V8 flags
 * first: V8 refuses a cache made under other flags.
 */
export type CodeCacheStatus = 'accepted' | 'rejected' | 'absent';

export interface BundleScript {
  codeCache: CodeCacheStatus;
  /** Runs the bundle as if `require`d. */
  run(): void;
  /** Writes the cache of everything compiled so far (the build's recording run); returns its bytes. */
  recordCodeCache(): number;
}

type ModuleFunction = (
  exports: unknown,
  require: NodeJS.Require,
  module: { exports: unknown },
  filename: string,
  dirname: string,
) => void;

/** The wrapper CommonJS gives every module; a cache is valid only for this exact text. */
const wrapBundle = (source: string): string =>
  `(function (exports, require, module, __filename, __dirname) {${source}\n})`;

function readCache(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/**
 * Whether `bundle` is at least as new as `source`, the build output it bundles: after tsc alone (a
 * watch, a partial build) the bundle would run the code of the build before, so its modules run
 * instead. npm gives every file of a package the same time, which counts as current.
 */
export function bundleIsCurrent(bundle: string, source: string): boolean {
  try {
    return statSync(bundle).mtimeMs >= statSync(source).mtimeMs;
  } catch {
    return false;
  }
}

export function bundleScript(bundle: string, cacheFile: string): BundleScript {
  const cachedData = readCache(cacheFile);
  const script = new Script(wrapBundle(readFileSync(bundle, 'utf8')), {
    filename: bundle,
    ...(cachedData === undefined ? {} : { cachedData }),
  });
  return {
    codeCache:
      cachedData === undefined ? 'absent' : script.cachedDataRejected === true ? 'rejected' : 'accepted',
    run() {
      const module = { exports: {} };
      (script.runInThisContext() as ModuleFunction)(
        module.exports,
        createRequire(bundle),
        module,
        bundle,
        dirname(bundle),
      );
    },
    recordCodeCache() {
      const data = script.createCachedData();
      // Renamed into place: a command starting meanwhile reads the old cache or the new one, not half.
      const partial = `${cacheFile}.${process.pid}.tmp`;
      writeFileSync(partial, data);
      renameSync(partial, cacheFile);
      return data.length;
    },
  };
}
