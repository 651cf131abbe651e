import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{a,b,c}from"./chunk-XV5UOWU6.js";import"./chunk-5HWXVV4G.js";import"./chunk-VM5WO332.js";import"./chunk-NUYE3OAI.js";export{a as ExtractionTimeoutError,c as extract,b as pruneOrphanedSatellites};
