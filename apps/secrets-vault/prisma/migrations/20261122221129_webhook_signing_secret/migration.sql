-- CreateTable
CREATE TABLE "WebhookSigningSecret" (
    "userId" TEXT NOT NULL,
    "ciphertext" BYTEA NOT NULL,
    "wrappedKey" BYTEA NOT NULL,
    "keyId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "WebhookSigningSecret_pkey" PRIMARY KEY ("userId")
);
