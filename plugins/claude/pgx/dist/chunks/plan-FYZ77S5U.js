import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{b as a,c as b,d as c,e as d}from"./chunk-OOOU23QI.js";import"./chunk-5HWXVV4G.js";import"./chunk-X3EXGASS.js";import"./chunk-VM5WO332.js";import"./chunk-NUYE3OAI.js";export{c as ENGINE_VERSION,b as parsePlan,d as plan,a as serializePlan};
