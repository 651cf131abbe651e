// Every command group of the CLI, one module each, in the order `pgx --help` lists them. A module says where its
// commands hang (`under`: `pgx` or `pgx agent`) and registers them; program.ts walks this list. A new command group is
// a new module and one line here.
import type { Command } from 'commander';
import type { BrokerWork } from '../broker/server.js';
import * as exec from './agent-exec.js';
import * as branches from './agent-branches.js';
import * as template from './template.js';
import * as diff from './agent-diff.js';
import * as reset from './agent-reset.js';
import * as merge from './agent-merge.js';
import * as freeze from './agent-freeze.js';
import * as pool from './agent-pool.js';
import * as broker from './agent-broker.js';
import * as hook from './agent-hook.js';
import * as install from './agent-install.js';
import * as verify from './agent-verify.js';
import * as local from './local.js';
import * as doctor from './doctor.js';
import * as init from './init.js';
import * as source from './source.js';
import * as registry from './registry.js';
import * as mcp from './mcp.js';

/** What the CLI's entry hands the commands that need a way in of its own: the work `agent broker serve` runs. */
export interface Wiring {
  brokerWork: BrokerWork;
}

export interface CommandGroup {
  under: 'pgx' | 'agent';
  register(parent: Command, wiring: Wiring): void;
}

export const COMMAND_GROUPS: readonly CommandGroup[] = [
  exec,
  branches,
  template,
  diff,
  reset,
  merge,
  freeze,
  pool,
  broker,
  hook,
  install,
  verify,
  local,
  doctor,
  init,
  source,
  mcp,
  registry,
];
