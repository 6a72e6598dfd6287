/**
 * An endpoint URL with the password of its userinfo shown as `***`: a secret like the key (the client
 * never sends it: userinfo is dropped), which reports and error messages printed whole (found by
 * probing). Textual, so a URL too broken to parse, quoted in an error, is masked as well.
 */
export function withoutPassword(endpoint: string): string {
  return endpoint.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/?#@:]*:)[^/?#]*@/i, '$1***@');
}
