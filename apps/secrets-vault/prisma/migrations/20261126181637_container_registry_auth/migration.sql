-- CreateTable
CREATE TABLE "ContainerRegistryAuth" (
    "id" TEXT NOT NULL,
    "ownerId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "ciphertext" BYTEA NOT NULL,
    "wrappedKey" BYTEA NOT NULL,
    "keyId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ContainerRegistryAuth_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "ContainerRegistryAuth_keyId_idx" ON "ContainerRegistryAuth"("keyId");

-- CreateIndex
CREATE UNIQUE INDEX "ContainerRegistryAuth_ownerId_name_key" ON "ContainerRegistryAuth"("ownerId", "name");

-- AddForeignKey
ALTER TABLE "ContainerRegistryAuth" ADD CONSTRAINT "ContainerRegistryAuth_ownerId_fkey" FOREIGN KEY ("ownerId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
