# SPDX-License-Identifier: MIT
"""report_summary.py REPORT [PROGRAM] - the JSON object `ntmem check --json`
wrote, one line per fact, for the shell checks to compare:

  status EXIT_STATUS errors N bugs N
  bug KIND WHEN OFFSET LENGTH FILE_NAME POINT at=yes|no first_store=yes|no \
      tx_begin=yes|no|-
  perf KIND COUNT at=yes|no
  note MESSAGE

FILE_NAME is the last component of "file" ("-" when null); at/first_store:
whether a frame of "backtrace"/"first_store" (of a perf record: "site") is
in PROGRAM (its file name); tx_begin: the same of "tx_begin" (a transaction
bug's pmemobj_tx_begin), "-" when the record has none.
Exits 1 (with the reason on stderr) if the report is not the object the
contract describes.
"""
import json
import re
import sys


def in_program(frames, prog):
    # A frame is "symbol+0x.. (/path/prog)" or names the file alone.
    pat = re.compile(r'/' + re.escape(prog) + r'(\)|\+|\s|$)')
    return 'yes' if any(pat.search(f) for f in frames) else 'no'


def main():
    prog = sys.argv[2] if len(sys.argv) > 2 else ''
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    for key in ('errors', 'perf_notes', 'exit_status', 'reports'):
        if key not in doc:
            sys.exit('report lacks "%s"' % key)
    bugs = [r for r in doc['reports'] if r.get('type') == 'bug']
    print('status %s errors %s bugs %d' %
          (doc['exit_status'], doc['errors'], len(bugs)))
    for r in bugs:
        file = r.get('file')
        name = file.rsplit('/', 1)[-1] if file else '-'
        txb = in_program(r['tx_begin'], prog) if 'tx_begin' in r else '-'
        print('bug %s %s %s %s %s %s at=%s first_store=%s tx_begin=%s' % (
            r.get('kind'), r.get('when'), r.get('offset'), r.get('length'),
            name, r.get('point'), in_program(r.get('backtrace', []), prog),
            in_program(r.get('first_store', []), prog), txb))
    for r in doc['reports']:
        if r.get('type') == 'perf':
            print('perf %s %s at=%s' % (r.get('kind'), r.get('count'),
                                        in_program(r.get('site', []), prog)))
    for r in doc['reports']:
        if r.get('type') == 'note':
            print('note %s' % r.get('message'))


main()
