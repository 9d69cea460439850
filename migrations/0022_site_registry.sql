-- The site registry (issue 44; docs/tenants.md, src/registry/store.ts): sites as data, each with its
-- own settings and admin token, added and removed through the platform API without a deploy. Sites
-- named by SITES are not in it (the variables win for the sites they name).

-- One row per registered site, live or being deleted.
CREATE TABLE registry_sites (
  -- scheme://host[:port], as URL.origin gives it
  origin     TEXT    PRIMARY KEY,
  -- JSON object: per-site variable name → value as the variable would be written, and DATABASE
  settings   TEXT    NOT NULL DEFAULT '{}',
  -- SHA-256 (hex) of the site's admin token; the token itself is shown once and never stored
  token_hash TEXT    NOT NULL,
  -- ms since the epoch
  created_at INTEGER NOT NULL,
  -- changed by every write of the row (settings, token): each isolate's list of sites carries it
  updated_at INTEGER NOT NULL,
  -- set by DELETE: the site no longer serves, and the site-purge job removes its data, then the row
  deleted_at INTEGER
) WITHOUT ROWID;
-- A site token is looked up by its hash (each token is one site's only).
CREATE UNIQUE INDEX registry_sites_token ON registry_sites (token_hash);
-- What the purge still has to remove, oldest first.
CREATE INDEX registry_sites_deleted ON registry_sites (deleted_at);
