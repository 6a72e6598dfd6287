import { describe, expect, it } from 'vitest';
import { withoutPassword } from './url-password.js';

describe('withoutPassword', () => {
  it("masks the password of a URL's userinfo, parsable or not, and nothing else", () => {
    expect(withoutPassword('http://user:s3cr3t@127.0.0.1:8080/bc')).toBe('http://user:***@127.0.0.1:8080/bc');
    expect(withoutPassword('ftp://user:s3cr3t@127.0.0.1:99999')).toBe('ftp://user:***@127.0.0.1:99999');
    expect(withoutPassword('https://u:p@ss@host/')).toBe('https://u:***@host/');
    expect(withoutPassword('http://user@host:1/')).toBe('http://user@host:1/');
    expect(withoutPassword('http://host:1/path?q=a:b@c')).toBe('http://host:1/path?q=a:b@c');
    expect(withoutPassword('https://api.example.com')).toBe('https://api.example.com');
  });
});
