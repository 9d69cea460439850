/**
 * Whether an outbound call failed because this invocation's own limit refused it
 * (src/jobs/meter.ts `InvocationLimitError`, src/jobs/metered-env.ts `CallLimitError`), not because
 * of the remote: such an error is never recorded as the remote's failure (a notify target's backoff,
 * a mirror's error, a crawler list's), it fails the job step. Matched by name: the services below
 * the jobs do not import them.
 */
export const isOwnLimit = (err: unknown): boolean => err instanceof Error && (err.name === "InvocationLimitError" || err.name === "CallLimitError");
