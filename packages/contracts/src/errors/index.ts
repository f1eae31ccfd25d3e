export * from './runplane-error.js';
