-- CreateTable
CREATE TABLE "NetworkVolume" (
    "id" TEXT NOT NULL,
    "ownerId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "dataCenterId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "NetworkVolume_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "NetworkVolume_ownerId_createdAt_idx" ON "NetworkVolume"("ownerId", "createdAt");
