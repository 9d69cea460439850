/**
 * The import: walk the input (following sitemap indexes), validate every record locally with the
 * core validator, and send valid records in batches to `PUT /sitemap-admin/urls`.
 *
 * Default mode is all-or-nothing for invalid input: a first pass validates the whole input and
 * nothing is sent if any line is bad; a second pass sends. `--skip-invalid` sends in one pass
 * and skips (and reports) bad lines. `--dry-run` is the first pass alone.
 */
import { Batcher } from "./batches.ts";
import { AdminClient, ClientError } from "./client.ts";
import { InputError } from "./input.ts";
import type { ImportOptions } from "./options.ts";
import { Problems } from "./problems.ts";
import { Progress, type ProgressStream } from "./progress.ts";
import { regenerate } from "./regenerate.ts";
import { Sender } from "./send.ts";
import { SiteCheck, rawOrigins } from "./sites.ts";
import { Stop } from "./stop.ts";
import { type ImportSummary, newSummary } from "./summary.ts";
import { SyncSession } from "./sync.ts";
import { BatchValidator } from "./validate.ts";
import { InputWalker } from "./walk.ts";

export interface ImportResult {
  summary: ImportSummary;
  /** 0 ok; 1 invalid input (reported); 3 the server or network failed. */
  exitCode: 0 | 1 | 3;
}

/** Errors that end the import with a message and an exit code; others are bugs and propagate. */
function exitCodeOf(err: unknown): 1 | 3 | undefined {
  if (err instanceof Stop) return err.exitCode;
  if (err instanceof InputError) return 1;
  if (err instanceof ClientError) return 3;
  return undefined;
}

export async function runImport(options: ImportOptions, stderr: ProgressStream): Promise<ImportResult> {
  const started = performance.now();
  const progress = new Progress(stderr, options.progressMs, options.quiet);
  const summary = newSummary(options);
  const problems = new Problems(summary, progress, options.maxReported);
  const client = new AdminClient({
    url: options.url,
    token: options.token ?? "",
    retries: options.retries,
    baseDelayMs: options.retryBaseMs,
    maxDelayMs: options.retryMaxMs,
    onRetry: ({ attempt, delayMs, reason }) => progress.message(`retry ${attempt}/${options.retries} in ${delayMs} ms (${reason})`),
  });
  const walker = new InputWalker(problems, progress, options);
  const validator = new BatchValidator(options, summary, problems);
  const sites = new SiteCheck(client, options, summary, progress);
  const sender = new Sender(client, options, summary, problems);

  /** Reads the whole input once: validating only, or validating and sending. */
  async function pass(label: string, sending: boolean): Promise<void> {
    validator.restart();
    problems.restartDropped();
    summary.duplicates = 0;
    const batcher = new Batcher(options.batchSize, options.maxBatchBytes);
    let count = 0;
    const flush = async (): Promise<void> => {
      const batch = batcher.take();
      // In a one-pass import the first batch decides a local preview's origin before validation.
      if (sending && options.autoRehost && summary.rehostedTo === null) await sites.ensure(rawOrigins(batch));
      const valid = validator.validate(batch);
      // A loc that repeats one of an earlier batch replaces it (last wins): one record, not two.
      count += valid.length - validator.takeReplaced();
      summary.records = count;
      if (sending) {
        await sites.ensure(new Set(valid.map((v) => v.record.origin)));
        await sender.send(valid);
      }
      progress.update(count, walker.fraction());
    };
    progress.phase(label);
    for await (const entry of walker.walk(options.input, options.format)) {
      if (batcher.add(entry)) await flush();
      else if (batcher.size % 1000 === 0) progress.update(count + batcher.size, walker.fraction());
    }
    if (batcher.size > 0) await flush();
    progress.done();
  }

  let exitCode: 0 | 1 | 3 = 0;
  let sync: SyncSession | null = null;
  try {
    if (options.dryRun) {
      await pass("validating", false);
    } else if (options.sync) {
      // A sync always validates the whole input first: it learns the scope (the input's sites),
      // and an input with nothing valid in it is refused before anything is started.
      await pass("validating", false);
      if (summary.invalid > 0 && !options.skipInvalid) {
        progress.message(
          `${summary.invalid} invalid ${summary.invalid === 1 ? "line" : "lines"}: nothing was sent, nothing deleted (fix them, or pass --skip-invalid: the records of invalid lines then count as absent and are deleted)`,
        );
      } else if (validator.origins.size === 0) {
        throw new Stop(1, "the input has no valid record: an empty input never empties a scope, so nothing was sent or deleted");
      } else {
        if (summary.invalid > 0) progress.message(`${summary.invalid} invalid lines skipped: records they name count as absent from the input`);
        await sites.ensure(validator.origins);
        const scope = summary.rehostedTo !== null ? [summary.rehostedTo] : [...validator.origins].sort();
        sync = await SyncSession.start(client, {
          sites: scope,
          ...(options.section === undefined ? {} : { section: options.section }),
          maxDelete: options.maxDelete,
        });
        summary.syncId = sync.id;
        sender.path = sync.path;
        const stopOnSignal = () => void sync?.abort().finally(() => process.exit(130));
        process.once("SIGINT", stopOnSignal);
        process.once("SIGTERM", stopOnSignal);
        try {
          walker.restart();
          await pass("importing", true);
          progress.phase("deleting");
          summary.deleted = await sync.commit(progress);
          progress.done();
          sync = null;
          if (summary.deleted > 0) for (const origin of scope) sender.changedOrigins.add(origin);
        } finally {
          process.off("SIGINT", stopOnSignal);
          process.off("SIGTERM", stopOnSignal);
        }
      }
    } else if (options.skipInvalid) {
      await pass("importing", true);
    } else {
      await pass("validating", false);
      if (summary.invalid === 0) {
        await sites.ensure(validator.origins);
        walker.restart();
        await pass("importing", true);
      } else {
        progress.message(
          `${summary.invalid} invalid ${summary.invalid === 1 ? "line" : "lines"}: nothing was sent (fix them, or pass --skip-invalid to import the valid records)`,
        );
      }
    }
    if (summary.invalid > 0) exitCode = 1;
    if (options.regenerate && sender.changedOrigins.size > 0) summary.regenerated = await regenerate(client, options.url, sender.changedOrigins, progress);
  } catch (err) {
    // A sync that did not commit deletes nothing; ending it now saves the server the wait for its expiry.
    if (sync !== null) await sync.abort();
    const code = exitCodeOf(err);
    if (code === undefined) throw err;
    progress.message(`error: ${(err as Error).message}`);
    exitCode = code;
  }
  problems.printDropped();
  if (summary.duplicates > 0) {
    const what = summary.duplicates === 1 ? "loc repeats" : "locs repeat";
    progress.message(
      `${summary.duplicates} ${what} an earlier one (first at ${validator.firstRepeatAt}): the last occurrence of each was kept (--strict rejects them)`,
    );
  }
  summary.retries = client.retried;
  summary.elapsedMs = Math.round(performance.now() - started);
  return { summary, exitCode };
}
