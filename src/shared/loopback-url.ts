/**
 * Whether a URL names this machine by a loopback address: `127.0.0.0/8`, `::1` or `localhost`
 * (RFC 6761 reserves it for loopback). The local key is sent nowhere else, and
 * no proxy is asked to reach it.
 */
export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:') return false;
    host = parsed.hostname;
  } catch {
    return false;
  }
  if (host === 'localhost' || host === '[::1]') return true;
  const octets = host.split('.');
  return (
    octets.length === 4 && octets[0] === '127' && octets.every((o) => /^\d{1,3}$/.test(o) && Number(o) <= 255)
  );
}
