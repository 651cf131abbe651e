// The disk budget's arithmetic (engine/disk-budget.ts judge, bytesWritten; clone-method.ts copyWay) and its setting
// ([disk] reserve in .pgx.toml). The budget against a real server and file system: tests/engine/disk-budget*.test.ts.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  bytesWritten,
  COW_BYTES,
  judge,
  reserveBytes,
  reserveText,
  type FileSystem,
} from '../../src/engine/disk-budget.js';
import { copyWay } from '../../src/engine/clone-method.js';
import { loadConfig } from '../../src/project/config.js';
import { parseReserve } from '../../src/project/config-values.js';

const MB = 1024 * 1024;
const fs = (dev: number, freeMb: number, sizeMb = 1000): FileSystem => ({
  path: `/fs${dev}`,
  dev,
  free: freeMb * MB,
  size: sizeMb * MB,
});
const none = () => 0;

describe('disk budget arithmetic', () => {
  it('a copy fits while free − owed − in flight − needed stays at or above the reserve', () => {
    const data = fs(1, 300);
    expect(judge([{ fs: data, bytes: 100 * MB }], { bytes: 200 * MB }, none, 0)).toBeUndefined(); // 300 − 100 = 200: fits
    expect(judge([{ fs: data, bytes: 100 * MB + 1 }], { bytes: 200 * MB }, none, 0)).toMatchObject({
      needed: 100 * MB + 1,
      reserve: 200 * MB,
      floor: 200 * MB,
      inFlight: 0,
      owed: 0,
    });
    // shared_buffers owed to the disk, and copies of this process still running, count as used
    expect(judge([{ fs: data, bytes: 50 * MB }], { bytes: 200 * MB }, none, 60 * MB)).toMatchObject({ owed: 60 * MB });
    expect(judge([{ fs: data, bytes: 50 * MB }], { bytes: 200 * MB }, () => 60 * MB, 0)).toMatchObject({
      inFlight: 60 * MB,
    });
  });

  it('the warm pool (speculative) keeps twice the reserve', () => {
    const data = fs(1, 300);
    expect(judge([{ fs: data, bytes: 50 * MB }], { bytes: 100 * MB }, none, 0, false)).toBeUndefined();
    expect(judge([{ fs: data, bytes: 50 * MB }], { bytes: 100 * MB }, none, 0, true)).toBeUndefined(); // 250 ≥ 200
    expect(judge([{ fs: data, bytes: 101 * MB }], { bytes: 100 * MB }, none, 0, true)).toMatchObject({
      floor: 200 * MB,
      reserve: 100 * MB,
    });
  });

  it('demands on one file system add up (files and WAL); on two, each is judged on its own', () => {
    const data = fs(1, 300);
    const tablespace = fs(2, 120, 200);
    // files 100 + WAL 100 on the data directory: 300 − 200 = 100 < 150
    expect(
      judge(
        [
          { fs: data, bytes: 100 * MB },
          { fs: data, bytes: 100 * MB },
        ],
        { bytes: 150 * MB },
        none,
        0,
      ),
    ).toMatchObject({ fs: data, needed: 200 * MB });
    // files on the tablespace (120 − 100 = 20), WAL on the data directory (300 − 100 = 200): the tablespace refuses
    expect(
      judge(
        [
          { fs: tablespace, bytes: 100 * MB },
          { fs: data, bytes: 100 * MB },
        ],
        { bytes: 50 * MB },
        none,
        0,
      ),
    ).toMatchObject({ fs: tablespace, needed: 100 * MB });
    // a percentage is of each file system's own size: 10% of 200 MB = 20 MB, of 1000 MB = 100 MB
    expect(
      judge(
        [
          { fs: tablespace, bytes: 100 * MB },
          { fs: data, bytes: 100 * MB },
        ],
        { percent: 10 },
        none,
        0,
      ),
    ).toBeUndefined();
    expect(reserveBytes({ percent: 10 }, 200 * MB)).toBe(20 * MB);
  });

  it('what each way of copying writes: copy-on-write almost nothing, FILE_COPY the files, WAL_LOG and a restore twice', () => {
    expect(bytesWritten('cow', 1024 * MB)).toEqual({ files: COW_BYTES, wal: 0 });
    expect(bytesWritten('cow', 2 * MB)).toEqual({ files: 2 * MB, wal: 0 });
    expect(bytesWritten('file-copy', 100 * MB)).toEqual({ files: 100 * MB, wal: 0 });
    expect(bytesWritten('wal-log', 10 * MB)).toEqual({ files: 10 * MB, wal: 10 * MB });
    expect(bytesWritten('dump-restore', 10 * MB)).toEqual({ files: 10 * MB, wal: 10 * MB });
  });

  it('a clone counts as copy-on-write only once the probe found reflinks; the probe itself as a full copy', () => {
    expect(copyWay({ strategy: 'FILE_COPY', fileCopyMethod: 'clone' }, 180000)).toBe('cow');
    expect(copyWay({ strategy: 'FILE_COPY', fileCopyMethod: 'clone', probe: true }, 180000)).toBe('file-copy');
    expect(copyWay({ strategy: 'WAL_LOG' }, 150000)).toBe('wal-log');
    expect(copyWay({}, 150000)).toBe('wal-log'); // PostgreSQL 15+'s default strategy
    expect(copyWay({}, 140000)).toBe('file-copy');
  });
});

describe('[disk] reserve', () => {
  const project = (toml: string) => {
    const dir = mkdtempSync(join(tmpdir(), 'pgx-cfg-'));
    writeFileSync(join(dir, '.pgx.toml'), toml);
    return dir;
  };

  it('defaults to 2GB, or 10% of a file system under 20 GB; takes a size, a number of bytes or a percentage', () => {
    const byDefault = loadConfig({ cwd: project(''), env: {} }).disk.reserve;
    expect(byDefault).toEqual({ bytes: 2 * 1024 ** 3, percent: 10 });
    expect(reserveBytes(byDefault, 252 * 1024 ** 3)).toBe(2 * 1024 ** 3);
    expect(reserveBytes(byDefault, 2 * 1024 ** 3)).toBe(Math.ceil(0.2 * 1024 ** 3));
    expect(reserveText(byDefault)).toBe('[disk] reserve unset: 2GB, or 10% of a smaller file system');
    expect(reserveText({ bytes: 24 * MB })).toBe('[disk] reserve = "24MB"');
    expect(reserveText({ percent: 5 })).toBe('[disk] reserve = "5%"');
    expect(loadConfig({ cwd: project('[disk]\nreserve = "500MB"\n'), env: {} }).disk.reserve).toEqual({
      bytes: 500 * MB,
    });
    expect(loadConfig({ cwd: project('[disk]\nreserve = 0\n'), env: {} }).disk.reserve).toEqual({ bytes: 0 });
    expect(loadConfig({ cwd: project('[disk]\nreserve = "12.5%"\n'), env: {} }).disk.reserve).toEqual({
      percent: 12.5,
    });
    expect(parseReserve(' 10 % ')).toEqual({ percent: 10 });
  });

  it('refuses what is not a size or a percentage, more than 90%, and unknown keys, with the key path', () => {
    expect(() => loadConfig({ cwd: project('[disk]\nreserve = "lots"\n'), env: {} })).toThrow(
      /disk\.reserve: "lots" is not a size like 512MB or 2GB/,
    );
    expect(() => loadConfig({ cwd: project('[disk]\nreserve = "95%"\n'), env: {} })).toThrow(
      /disk\.reserve: "95%" is more than 90% of the file system/,
    );
    expect(() => loadConfig({ cwd: project('[disk]\nreserve = -1\n'), env: {} })).toThrow(
      /disk\.reserve: must be a non-negative number of bytes/,
    );
    expect(() => loadConfig({ cwd: project('[disk]\nreserv = "1GB"\n'), env: {} })).toThrow(
      /disk: unknown key\(s\) "reserv"/,
    );
  });
});
