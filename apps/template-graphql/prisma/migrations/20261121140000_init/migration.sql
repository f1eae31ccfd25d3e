-- CreateTable
CREATE TABLE "Template" (
    "id" TEXT NOT NULL,
    "ownerId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "imageName" TEXT NOT NULL,
    "category" TEXT NOT NULL DEFAULT 'NVIDIA',
    "containerDiskInGb" INTEGER NOT NULL DEFAULT 50,
    "volumeInGb" INTEGER NOT NULL DEFAULT 20,
    "volumeMountPath" TEXT NOT NULL DEFAULT '/workspace',
    "containerRegistryAuthId" TEXT,
    "dockerEntrypoint" TEXT[],
    "dockerStartCmd" TEXT[],
    "env" JSONB NOT NULL DEFAULT '{}',
    "ports" TEXT[],
    "readme" TEXT NOT NULL DEFAULT '',
    "isPublic" BOOLEAN NOT NULL DEFAULT false,
    "isServerless" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Template_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Template_name_key" ON "Template"("name");

-- CreateIndex
CREATE INDEX "Template_ownerId_idx" ON "Template"("ownerId");
