/**
 * Resolves on a later turn of the isolate's event loop. workerd sends a subrequest (a D1 query, a
 * KV get) when JavaScript returns to the event loop, and rendering a page of records is one long
 * chain of microtasks that never does: a read issued ahead of the render then leaves only after it.
 * Awaiting this once, right after issuing the read, sends it first (BENCHMARKS.md "Overlapped cold
 * render": without it the query ahead and the render took turns).
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
