/**
 * `npm run import -- <file or URL> [--remote] [--url … --token …] [--dry-run] …`
 * Imports CSV, NDJSON, text lists, sitemap XML (.xml/.xml.gz, indexes followed) or RSS / Atom
 * feeds through the admin API. See docs/ingest.md, or run with --help.
 */
import { main } from "./import/cli.ts";

process.exitCode = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
});
