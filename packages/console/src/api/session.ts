// The API key lives only in this tab's sessionStorage: gone when the tab closes, never in a URL,
// a cookie or the server (which keeps no session state for the console).
const STORAGE_KEY = 'runplane.apiKey';

export function storedKey(): string | null {
  return sessionStorage.getItem(STORAGE_KEY);
}

export function storeKey(key: string): void {
  sessionStorage.setItem(STORAGE_KEY, key);
}

export function forgetKey(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}
