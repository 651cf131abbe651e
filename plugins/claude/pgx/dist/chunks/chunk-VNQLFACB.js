import { createRequire as __pgxCreateRequire } from 'node:module'; const require = __pgxCreateRequire(import.meta.url);
import{homedir as r}from"node:os";import{join as e,resolve as i}from"node:path";function p(o=process.env){return o.PGX_HOME?i(o.PGX_HOME):e(r(),".pgx")}export{p as a};
