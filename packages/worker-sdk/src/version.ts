/** Sent as `runpod_version` on pings and in error reports, like runpod-python sends its own. */
export const SDK_VERSION = '0.1.0';
export const USER_AGENT = `RunplaneWorkerSDK/${SDK_VERSION} (Node ${process.version})`;
