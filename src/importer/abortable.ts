/**
 * The items of `source` until `signal` aborts. A read waiting on an idle stdin (a producer that writes
 * nothing for a while, `tail -f log | cas import -`) heard Ctrl-C or SIGTERM only once more bytes came:
 * 11-35 s in a probe, forever with a stalled producer. On an abort the pending read is left behind
 * (the command is ending); an early stop by the consumer closes the source, as `for await` would.
 */
export async function* abortable<T>(
  source: AsyncGenerator<T>,
  signal: AbortSignal | undefined,
): AsyncGenerator<T, void, undefined> {
  if (!signal) {
    yield* source;
    return;
  }
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<'aborted'>((resolve) => {
    onAbort = () => resolve('aborted');
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  let pending = false;
  try {
    for (;;) {
      pending = true;
      const next = await Promise.race([source.next(), aborted]);
      // Aborted: the read is still pending.
      if (next === 'aborted') return;
      pending = false;
      if (next.done) return;
      yield next.value;
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    // A source suspended in a read would make this wait for its bytes: it is let go instead.
    if (pending) void source.return(undefined).catch(() => undefined);
    else await source.return(undefined);
  }
}
