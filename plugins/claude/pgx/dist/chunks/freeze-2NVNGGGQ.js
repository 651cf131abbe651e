import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{f as a,g as b,h as c,i as d,j as e}from"./chunk-2XX47FDC.js";import"./chunk-UCTCLUCQ.js";import"./chunk-TJJBJRXK.js";import"./chunk-NUYE3OAI.js";export{a as FrozenCopyWaitError,b as forkViaFrozenCopy,e as freezeBranch,c as freezeFor,d as frozenCopySummaries};
