-- /health's completed, failed and retried counts kept per endpoint as jobs change, instead of
-- counted over every retained job at each call (100 ms at 300,000 retained jobs, and the console
-- asks every few seconds). A job counts while it is not a tombstone ("deletedAt" IS NULL): as
-- completed or failed by its status, as retried when retries > 0. Triggers on Job record every
-- change of what a job counts as (a finish, a retry, a tombstone, a delete), whatever statement
-- made it; their WHEN clauses are checked without calling the function, so other changes (an
-- insert, a claim) pay nothing. A change is a row of its own in "EndpointJobCountChange", not an
-- update of the endpoint's count: a statement finishing a thousand jobs of one endpoint would
-- otherwise update one row a thousand times in one transaction (each update walking the chain of
-- the ones before), and concurrent statements would wait on that row. The scheduler's sweeper
-- folds the changes into "EndpointJobCount"; /health adds the ones not folded yet. Jobs past
-- "expiresAt" that the sweeper has not made tombstones yet still count here: /health subtracts
-- them (what expired since its last sweep), read through "Job_expiresAt_idx".

-- CreateTable
CREATE TABLE "EndpointJobCount" (
    "endpointId" TEXT NOT NULL,
    "completed" INTEGER NOT NULL DEFAULT 0,
    "failed" INTEGER NOT NULL DEFAULT 0,
    "retried" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "EndpointJobCount_pkey" PRIMARY KEY ("endpointId")
);

-- CreateTable
CREATE TABLE "EndpointJobCountChange" (
    "id" BIGSERIAL NOT NULL,
    "endpointId" TEXT NOT NULL,
    "completed" INTEGER NOT NULL,
    "failed" INTEGER NOT NULL,
    "retried" INTEGER NOT NULL,

    CONSTRAINT "EndpointJobCountChange_pkey" PRIMARY KEY ("id")
);

-- Only jobs not yet tombstones: what the TTL sweep and /health look for, without reading the
-- tombstones of the last hour first.
-- DropIndex
DROP INDEX "Job_expiresAt_idx";

-- CreateIndex
CREATE INDEX "Job_expiresAt_idx" ON "Job"("expiresAt") WHERE ("deletedAt" IS NULL);

-- The function runs with the search_path of this migration (the service's schema), so it finds
-- the table whatever the calling session's search_path is.
CREATE FUNCTION "endpoint_job_count_change"() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
  endpoint TEXT := CASE WHEN TG_OP = 'DELETE' THEN OLD."endpointId" ELSE NEW."endpointId" END;
  d_completed INTEGER := 0;
  d_failed INTEGER := 0;
  d_retried INTEGER := 0;
BEGIN
  IF TG_OP <> 'INSERT' AND OLD."deletedAt" IS NULL THEN
    d_completed := -(OLD.status = 'COMPLETED')::int;
    d_failed := -(OLD.status = 'FAILED')::int;
    d_retried := -(OLD.retries > 0)::int;
    IF OLD."endpointId" <> endpoint THEN
      INSERT INTO "EndpointJobCountChange" ("endpointId", completed, failed, retried)
      VALUES (OLD."endpointId", d_completed, d_failed, d_retried);
      d_completed := 0;
      d_failed := 0;
      d_retried := 0;
    END IF;
  END IF;
  IF TG_OP <> 'DELETE' AND NEW."deletedAt" IS NULL THEN
    d_completed := d_completed + (NEW.status = 'COMPLETED')::int;
    d_failed := d_failed + (NEW.status = 'FAILED')::int;
    d_retried := d_retried + (NEW.retries > 0)::int;
  END IF;
  INSERT INTO "EndpointJobCountChange" ("endpointId", completed, failed, retried)
  VALUES (endpoint, d_completed, d_failed, d_retried);
  RETURN NULL;
END $$;

CREATE TRIGGER "Job_count_insert" AFTER INSERT ON "Job" FOR EACH ROW
WHEN (NEW."deletedAt" IS NULL AND (NEW.status IN ('COMPLETED', 'FAILED') OR NEW.retries > 0))
EXECUTE FUNCTION "endpoint_job_count_change"();

CREATE TRIGGER "Job_count_update" AFTER UPDATE ON "Job" FOR EACH ROW
WHEN (OLD."endpointId" IS DISTINCT FROM NEW."endpointId"
  OR ROW(OLD."deletedAt" IS NULL AND OLD.status = 'COMPLETED', OLD."deletedAt" IS NULL AND OLD.status = 'FAILED', OLD."deletedAt" IS NULL AND OLD.retries > 0)
     IS DISTINCT FROM
     ROW(NEW."deletedAt" IS NULL AND NEW.status = 'COMPLETED', NEW."deletedAt" IS NULL AND NEW.status = 'FAILED', NEW."deletedAt" IS NULL AND NEW.retries > 0))
EXECUTE FUNCTION "endpoint_job_count_change"();

CREATE TRIGGER "Job_count_delete" AFTER DELETE ON "Job" FOR EACH ROW
WHEN (OLD."deletedAt" IS NULL AND (OLD.status IN ('COMPLETED', 'FAILED') OR OLD.retries > 0))
EXECUTE FUNCTION "endpoint_job_count_change"();

-- The jobs already there.
INSERT INTO "EndpointJobCount" ("endpointId", completed, failed, retried)
SELECT "endpointId", count(*) FILTER (WHERE status = 'COMPLETED'), count(*) FILTER (WHERE status = 'FAILED'),
  count(*) FILTER (WHERE retries > 0)
FROM "Job" WHERE "deletedAt" IS NULL AND (status IN ('COMPLETED', 'FAILED') OR retries > 0)
GROUP BY "endpointId";
