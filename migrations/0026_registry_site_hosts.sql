-- A host names one registered site, whatever its scheme or port (issue 50; docs/tenants.md "The
-- platform API"): cookies ignore ports, and http:// and https:// of one host are one site's. Each
-- row keeps its origin's host as compared (src/registry/own-host.ts siteHost: URL.hostname without
-- its port and without a trailing dot), and a registration inserts only where no row has that host,
-- in one statement (src/adapters/d1/site-registry.ts create), so two concurrent registrations of one
-- host leave one site. Not a UNIQUE index: rows registered before this rule may share a host, and
-- the migration must not fail on them; the conditional insert keeps every new one apart.
ALTER TABLE registry_sites ADD COLUMN host TEXT NOT NULL DEFAULT '';

-- Backfill from the origin (scheme://host[:port], as URL.origin gives it: already lowercase):
-- the authority, then without its port ([v6]:port keeps the brackets), then without a trailing dot.
UPDATE registry_sites SET host = substr(origin, instr(origin, '://') + 3);
UPDATE registry_sites SET host = CASE
  WHEN substr(host, 1, 1) = '[' THEN substr(host, 1, instr(host, ']'))
  WHEN instr(host, ':') > 0 THEN substr(host, 1, instr(host, ':') - 1)
  ELSE host
END;
UPDATE registry_sites SET host = rtrim(host, '.');

-- The registration's look-up of a host.
CREATE INDEX registry_sites_host ON registry_sites (host);
