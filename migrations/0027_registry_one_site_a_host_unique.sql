-- A host names one registered site (issue 50; docs/tenants.md "The platform API"), now held by the
-- database itself: a UNIQUE index on the host, so no statement of any Worker version can add a second
-- row for a host, whatever the registration's own check does.
--
-- Rows registered before 0026's rule may share a host (http:// and https:// of one host, or two
-- ports). Nothing is deleted for that: each is a tenant's site, serving and holding records. One row
-- keeps the host: a live one before one being deleted (that one is going away; its purge finds it by
-- origin), then the one registered first, then the first origin — the site that had the host before
-- the others were let in. Every other keeps serving at its origin as before, its host column written
-- `<host> <origin>`: no host has a space, so no registration's host equals it, and the registration
-- refuses a host while any row's host is the host or begins with it and a space
-- (src/adapters/d1/site-registry.ts), so the host is not registered anew while a twin of it is left.
-- Order-independent: the row that keeps the host is never updated, and each other row loses to it.
UPDATE registry_sites SET host = host || ' ' || origin
WHERE EXISTS (
  SELECT 1 FROM registry_sites AS other
  WHERE other.host = registry_sites.host
    AND other.origin <> registry_sites.origin
    AND (
      (other.deleted_at IS NULL AND registry_sites.deleted_at IS NOT NULL)
      OR ((other.deleted_at IS NULL) = (registry_sites.deleted_at IS NULL)
          AND (other.created_at < registry_sites.created_at
               OR (other.created_at = registry_sites.created_at AND other.origin < registry_sites.origin)))
    )
);

CREATE UNIQUE INDEX registry_sites_one_per_host ON registry_sites (host);
-- 0026's index on the host: the unique one serves its look-ups now.
DROP INDEX IF EXISTS registry_sites_host;
