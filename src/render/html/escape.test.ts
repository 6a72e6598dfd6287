import { describe, expect, it } from 'vitest';
import { assertInlineable, escapeHtml, jsonForScript, scriptHash } from './escape.js';

describe('jsonForScript', () => {
  it('leaves no character that could end the script element or a JS string', () => {
    const value = { a: '</script><script>alert(1)</script>', b: '<!-- & -->', c: 'x\u2028y\u2029z' };
    const text = jsonForScript(value);
    expect(text).not.toMatch(/[<>&\u2028\u2029]/);
    expect(text).toContain('\\u003c/script\\u003e');
    expect(JSON.parse(text)).toEqual(value);
  });

  it('leaves no DEL, C1 or bidi control raw, so a page printed to a terminal cannot act on it', () => {
    const value = { intent: 'x\u009b2J\u202eabc\u007f\u0085\u2066' };
    const text = jsonForScript(value);
    expect([...text].some((c) => /[\u007f-\u009f\u202e\u2066]/u.test(c))).toBe(false);
    expect(text).toContain('\\u009b2J\\u202eabc');
    expect(JSON.parse(text)).toEqual(value);
  });

  it('keeps numbers, nulls and nesting exact', () => {
    const value = [{ n: 0.1, big: 1e21, none: null, list: [true, 'é'] }];
    expect(JSON.parse(jsonForScript(value))).toEqual(value);
  });
});

describe('escapeHtml and the CSP hash', () => {
  it('escapes the five characters that matter in text and quoted attributes', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
  });

  it('hashes a script as CSP wants it', () => {
    // echo -n "alert(1)" | openssl dgst -sha256 -binary | base64
    expect(scriptHash('alert(1)')).toBe("'sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI='");
  });

  it('refuses to inline a library holding </script', () => {
    expect(() => assertInlineable('x = "</SCRIPT>"', 'lib')).toThrow(/lib contains/);
    expect(assertInlineable('x = 1', 'lib')).toBe('x = 1');
  });
});
