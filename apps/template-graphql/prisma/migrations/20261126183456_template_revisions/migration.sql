-- AlterTable
ALTER TABLE "Template" ADD COLUMN     "revision" INTEGER NOT NULL DEFAULT 1;

-- CreateTable
CREATE TABLE "TemplateRevision" (
    "templateId" TEXT NOT NULL,
    "revision" INTEGER NOT NULL,
    "imageName" TEXT NOT NULL,
    "containerDiskInGb" INTEGER NOT NULL,
    "volumeInGb" INTEGER NOT NULL,
    "volumeMountPath" TEXT NOT NULL,
    "containerRegistryAuthId" TEXT,
    "dockerEntrypoint" TEXT[],
    "dockerStartCmd" TEXT[],
    "env" JSONB NOT NULL,
    "ports" TEXT[],
    "portsConfig" JSONB NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "TemplateRevision_pkey" PRIMARY KEY ("templateId","revision")
);

-- AddForeignKey
ALTER TABLE "TemplateRevision" ADD CONSTRAINT "TemplateRevision_templateId_fkey" FOREIGN KEY ("templateId") REFERENCES "Template"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Existing templates: their current content is revision 1.
INSERT INTO "TemplateRevision" ("templateId", "revision", "imageName", "containerDiskInGb", "volumeInGb", "volumeMountPath", "containerRegistryAuthId", "dockerEntrypoint", "dockerStartCmd", "env", "ports", "portsConfig")
SELECT "id", "revision", "imageName", "containerDiskInGb", "volumeInGb", "volumeMountPath", "containerRegistryAuthId", "dockerEntrypoint", "dockerStartCmd", "env", "ports", "portsConfig" FROM "Template";
