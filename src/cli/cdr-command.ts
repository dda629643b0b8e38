// `patchbay cdr [--since T] [--until T] [--number N] [--disposition D] [--limit N] [--offset N]`:
// the stored call detail records, newest first, read from the server's GET /admin/cdr.
import { adminRequest, type Target } from './client.ts';
import type { AdminValues } from './options.ts';
import { json, str, table, type Row } from './output.ts';

export interface CdrOutput {
  stdout(text: string): void;
}

export async function cdrCommand(target: Target, _args: string[], values: AdminValues, out: CdrOutput): Promise<number> {
  const query = new URLSearchParams();
  if (values.since !== undefined) query.set('since', values.since);
  if (values.until !== undefined) query.set('until', values.until);
  if (values.number !== undefined) query.set('number', values.number);
  if (values.disposition !== undefined) query.set('disposition', values.disposition);
  query.set('limit', values.limit ?? '20');
  if (values.offset !== undefined) query.set('offset', values.offset);
  const answer = (await adminRequest(target, 'GET', `/cdr?${query.toString()}`, 'call records')) as { total: number; records: Row[] };
  if (values.json) {
    out.stdout(json(answer));
    return 0;
  }
  const headers = ['START', 'SRC', 'DST', 'CONTEXT', 'CHANNEL', 'DSTCHANNEL', 'LASTAPP', 'DURATION', 'BILLSEC', 'DISPOSITION'];
  const rows = answer.records.map((r) => [str(r.start_local), str(r.src), str(r.dst), str(r.dcontext), str(r.channel), str(r.dstchannel), str(r.lastapp), str(r.duration), str(r.billsec), str(r.disposition)]);
  out.stdout(table(headers, rows));
  out.stdout(`${answer.records.length} of ${answer.total} records\n`);
  return 0;
}
