// class-transformer keeps its metadata storage out of its index; this is its CommonJS entry (the
// one its decorators use under Node) with the types it ships.
declare module 'class-transformer/cjs/storage.js' {
  export { defaultMetadataStorage } from 'class-transformer/types/storage.js';
}
