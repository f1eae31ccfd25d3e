-- CreateTable
CREATE TABLE "WorkloadLogLine" (
    "id" BIGSERIAL NOT NULL,
    "podId" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,
    "stream" TEXT NOT NULL,
    "text" TEXT NOT NULL,

    CONSTRAINT "WorkloadLogLine_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "WorkloadLogLine_podId_id_idx" ON "WorkloadLogLine"("podId", "id");

-- CreateIndex
CREATE INDEX "WorkloadLogLine_podId_at_idx" ON "WorkloadLogLine"("podId", "at");
