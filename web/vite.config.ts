import path from 'node:path'
import vue from '@vitejs/plugin-vue'
import { defineConfig } from 'vite'

/**
 * The chat workbench: built into dist/web, which Parley serves at / (src/http/webApp.ts). Asset
 * names carry a content hash, so Parley caches /assets/ for good and revalidates index.html.
 */
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  plugins: [vue()],
  build: {
    outDir: path.join(import.meta.dirname, '..', 'dist', 'web'),
    emptyOutDir: true,
    chunkSizeWarningLimit: 1000,
  },
  logLevel: 'warn',
})
