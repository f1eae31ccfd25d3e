import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The server serves dist/ at `/`: index.html without caching, dist/assets/* (hashed names) for a year.
export default defineConfig({
  plugins: [react()],
  base: '/',
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    emptyOutDir: true,
    // No inline scripts or data: URLs in the page: the server's CSP allows only files of its own.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    chunkSizeWarningLimit: 800,
  },
  server: {
    // `npm run dev -w @runplane/console`: the API of a running server (RUNPLANE_URL, default :8080).
    proxy: Object.fromEntries(
      ['/v1', '/v2', '/graphql'].map((prefix) => [
        prefix,
        { target: process.env.RUNPLANE_URL ?? 'http://127.0.0.1:8080', changeOrigin: true },
      ]),
    ),
  },
});
