import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
<<<<<<<< HEAD:plugins/claude/pgx/dist/chunks/freeze-7RJFEEXS.js
import{e as a,f as b,g as c,h as d,i as e,j as f,k as g,l as h,m as i}from"./chunk-UFGTHAHH.js";import"./chunk-Y6ME3FWS.js";import"./chunk-PAPU6KH5.js";import"./chunk-VH6HZZNA.js";export{a as FrozenCopyWaitError,b as activitySignature,d as forkViaFrozenCopy,i as freezeBranch,e as freezeFor,f as freezeSessionState,h as frozenCopySummaries,g as gcFrozen,c as unchangedAcross};
========
import{e as a,f as b,g as c,h as d,i as e,j as f,k as g,l as h,m as i}from"./chunk-Z4E4RS4C.js";import"./chunk-KWIILTBT.js";import"./chunk-E45CQFLZ.js";import"./chunk-VH6HZZNA.js";export{a as FrozenCopyWaitError,b as activitySignature,d as forkViaFrozenCopy,i as freezeBranch,e as freezeFor,f as freezeSessionState,h as frozenCopySummaries,g as gcFrozen,c as unchangedAcross};
>>>>>>>> house-engine:plugins/claude/pgx/dist/chunks/freeze-CDMW55QN.js
