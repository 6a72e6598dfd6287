import { describe, expect, it } from 'vitest';
import { HttpError } from '../client/errors.js';
import { DataDirError } from '../service/lock-error.js';
import { describeFailure, EXIT } from './exit-codes.js';

describe('describeFailure', () => {
  it('maps typed errors to their exit codes, and anything else to a bug', () => {
    const target = { method: 'GET', path: '/bc/v1/user/list' };
    expect(describeFailure(new HttpError({ status: 404, message: 'no such user' }, target)).code).toBe(
      EXIT.notFound,
    );
    expect(describeFailure(new DataDirError('full', '/d', 'ENOSPC')).code).toBe(EXIT.unavailable);
    expect(describeFailure(new TypeError('oops'))).toEqual({
      code: EXIT.unexpected,
      message: 'TypeError: oops',
      hint: 'this is a bug; run with -v for details and report it',
    });
  });

  // The single-file binary copied without the two files beside it said "this is a bug".
  it('says a missing DuckDB driver is an installation problem, not a bug', () => {
    const notFound = Object.assign(
      new Error("Cannot find module '/opt/cas/duckdb.node'\nRequire stack:\n- /opt/cas/cas"),
      {
        code: 'MODULE_NOT_FOUND',
      },
    );
    const noLibrary = Object.assign(
      new Error('libduckdb.so: cannot open shared object file: No such file or directory'),
      { code: 'ERR_DLOPEN_FAILED' },
    );
    for (const error of [notFound, noLibrary]) {
      const failure = describeFailure(error);
      expect(failure.code).toBe(EXIT.unexpected);
      expect(failure.message).toMatch(/^the DuckDB driver cannot be loaded: /);
      expect(failure.message).not.toContain('Require stack');
      expect(failure.hint).toMatch(/duckdb\.node and libduckdb\.so beside it/);
    }
  });

  // Under `ulimit -v` the loader cannot map DuckDB's library: the files are there, the memory is not.
  it('says a driver the loader could not map, or WebAssembly memory not reserved, is the memory limit', () => {
    const unmapped = Object.assign(new Error('libduckdb.so: failed to map segment from shared object'), {
      code: 'ERR_DLOPEN_FAILED',
    });
    const wasm = new RangeError(
      'WebAssembly.Instance(): Out of memory: Cannot allocate Wasm memory for new instance',
    );
    for (const error of [unmapped, wasm]) {
      const failure = describeFailure(error);
      expect(failure.code).toBe(EXIT.unavailable);
      expect(failure.message).toContain("cannot be reserved under this process's limit");
      expect(failure.hint).toMatch(/ulimit -v/);
    }
    expect(describeFailure(new RangeError('Invalid array length')).code).toBe(EXIT.unexpected);
  });
});
