import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{f as a,g as b,h as c,i as d,j as e}from"./chunk-QIZLQCDV.js";import"./chunk-F27XFYYY.js";import"./chunk-K5Z3VTCC.js";import"./chunk-NUYE3OAI.js";export{a as FrozenCopyWaitError,b as forkViaFrozenCopy,e as freezeBranch,c as freezeFor,d as frozenCopySummaries};
