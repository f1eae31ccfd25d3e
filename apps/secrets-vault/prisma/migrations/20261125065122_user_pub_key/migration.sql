-- AlterTable
ALTER TABLE "User" ADD COLUMN     "pubKey" TEXT NOT NULL DEFAULT '';
