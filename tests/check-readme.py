#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""README.md cannot drift from the CLI: every command in it is checked.

usage: check-readme.py [--parse-only] [--readme FILE] SOURCE_DIR BUILD_DIR DWARFSAMPLE DEMO
       check-readme.py --self-check SOURCE_DIR BUILD_DIR DWARFSAMPLE DEMO

- Every fenced block is ```sh (commands) or ```text (output); a command
  outside a sh block, or a block of another kind, fails.
- The README starts with its quick start: exactly two one-line commands,
  the first installing .ci/debian-packages-build, building and profiling
  the demo, the second .ci/run.
- Every dwarfsample command — in a sh block, or in inline code anywhere
  (the tables) — is parsed by dwarfsample's own parser: the same argv with
  --help where its options end exits 0 only when every option before it
  was accepted, values included.  An unknown or renamed option fails.
- Every option named alone in inline code (`--stack-size`) is one of the
  options dwarfsample's --help texts list, unless it is listed below as
  another program's.
- dwarfsample commands, in sh blocks and in inline code, run, bounded
  (timeout, -d 1 and `-- sleep 1` for any longer sleep, ./myprog or CMD a
  short run of the demo, PID a running demo, FILE the run.data the five
  commands' record wrote), and must exit 0 and write their -o file;
  options alone (`dwarfsample --wall`) are only parsed; those that cannot
  run here (the package install, systemd, the agent's backends, runtimes
  the machine lacks, the whole CI) are checked as the table RULES says,
  each for a stated reason.
- The demo's summary quoted in the README matches the lines the quick
  start's command prints (numbers aside).
- Every relative link of the README and of docs/*.md reaches a file, and
  its anchor a heading there.
--self-check runs the check on doctored copies (an option renamed in a
sh block, in a table, in prose) and fails unless each copy fails it.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

# Flags of other programs that the README names in inline code.
FOREIGN_OPTIONS = {
    '-X',                           # python3 -X perf
    '--perf-basic-prof', '--perf-prof',   # node
    '-XX:+PreserveFramePointer',    # java
    '-O2', '-fomit-frame-pointer',  # the compiler
    '-ldflags=-B=0x…',              # go build
}

TIMEOUT = 40


class Fail(Exception):
    pass


def run(argv, **kw):
    kw.setdefault('timeout', TIMEOUT)
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, errors='replace', **kw)


def parse_readme(text):
    """(sh lines, text blocks with the comment before them, inline spans)"""
    sh, texts, inline, errors = [], [], [], []
    lines = text.split('\n')
    i = 0
    prose = []
    while i < len(lines):
        m = re.match(r'^```(.*)$', lines[i])
        if not m:
            prose.append((i + 1, lines[i]))
            i += 1
            continue
        lang, start = m.group(1).strip(), i + 1
        j = i + 1
        while j < len(lines) and not lines[j].startswith('```'):
            j += 1
        body = lines[i + 1:j]
        if lang == 'sh':
            for k, line in enumerate(body):
                if line.strip() and not line.lstrip().startswith('#'):
                    sh.append((start + 1 + k, line))
        elif lang == 'text':
            marker = lines[i - 1] if i else ''
            texts.append((start, marker, body))
            for k, line in enumerate(body):
                if re.match(r'^\s*(\$ |sudo |dwarfsample )', line):
                    errors.append(f'line {start + 1 + k}: a command in a text block '
                                  f'(put it in a sh block): {line}')
        else:
            errors.append(f'line {start}: a code block must be ```sh or ```text, '
                          f'not ```{lang}')
        i = j + 1
    for n, line in prose:
        for span in re.findall(r'`([^`]+)`', line):
            inline.append((n, span))
    return sh, texts, inline, errors


def slugs(text):
    """The anchors GitHub gives a Markdown file's headings."""
    seen, out, code = {}, set(), False
    for line in text.split('\n'):
        if line.startswith('```'):
            code = not code
        m = None if code else re.match(r'^#{1,6} (.*)$', line)
        if m:
            slug = re.sub(r'[^\w\- ]', '', m.group(1).strip().lower()).replace(' ', '-')
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            out.add(f'{slug}-{n}' if n else slug)
    return out


def check_links(path, base, fail):
    """Every relative link of a Markdown file, read as if in base, reaches a
    file, and a heading there."""
    text = open(path).read()
    name = os.path.basename(path)
    for n, line in enumerate(text.split('\n'), 1):
        for target in re.findall(r'\]\(([^)\s]+)\)', line):
            if re.match(r'^[a-z]+:', target):
                continue
            file, _, anchor = target.partition('#')
            dest = os.path.normpath(os.path.join(base, file)) if file else path
            if not os.path.exists(dest):
                fail(f'{name}:{n}', f'the link {target} reaches no file')
            elif anchor and dest.endswith('.md') and anchor not in slugs(open(dest).read()):
                fail(f'{name}:{n}', f'the link {target} reaches no heading')


def split_commands(line):
    """A line's simple commands: split at && and |, env and sudo dropped."""
    out = []
    for part in re.split(r'\s&&\s|\s\|\s', line):
        try:
            words = shlex.split(part, comments=True)
        except ValueError as e:
            raise Fail(f'cannot split {part!r}: {e}')
        while words and (re.match(r'^[A-Z_][A-Z0-9_]*=', words[0]) or words[0] == 'sudo'):
            words.pop(0)
        if words:
            out.append((part.strip(), words))
    return out


class Checker:
    def __init__(self, src, build, ds, demo, parse_only):
        self.src, self.build, self.ds, self.demo = src, build, ds, demo
        self.parse_only = parse_only
        self.failures = []
        self.notes = []
        self.tmp = tempfile.mkdtemp(prefix='check-readme.')
        self.myprog = os.path.join(self.tmp, 'myprog')
        with open(self.myprog, 'w') as f:
            # A short run of the demo, whatever arguments it is given.
            f.write(f'#!/bin/sh\nexec "{demo}" 0.3 1\n')
        os.chmod(self.myprog, 0o755)
        # A process for PID in commands only parsed; one that runs gets a
        # demo of its own for the time it runs.
        self.target = subprocess.Popen(['sleep', '300'])
        self.demo_stderr = None
        self.ran = set()
        self.env = dict(os.environ)
        self.env['PATH'] = os.path.dirname(ds) + ':' + self.env.get('PATH', '')
        # record keeps files in perf's build-id cache, ~/.debug: the test's
        # go to its own directory; the cache of parsed symbols stays shared.
        self.env.setdefault('XDG_CACHE_HOME', os.path.expanduser('~/.cache'))
        self.env['HOME'] = self.tmp
        self.options = self.known_options()

    def close(self):
        self.target.kill()
        self.target.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def fail(self, where, msg):
        self.failures.append(f'{where}: {msg}')

    def known_options(self):
        opts = set()
        for verb in ['', 'record', 'report', 'dump', 'stat', 'agent']:
            r = run([self.ds] + ([verb] if verb else []) + ['--help'])
            for m in re.finditer(r'(?:^|[ ,])(--[a-z][a-z0-9-]*|-[a-zA-Z])\b', r.stdout, re.M):
                opts.add(m.group(1))
        if '--stack-size' not in opts:
            raise Fail('no options found in dwarfsample --help')
        return opts

    def subst(self, words, pid=None):
        out = []
        for w in words:
            if w in ('PID', 'TID'):
                # A process's first thread's id is its pid.
                w = str(pid or self.target.pid)
            elif w in ('./myprog', 'CMD'):
                w = self.myprog
            elif w == 'FILE':
                w = 'run.data'      # the five commands' record wrote it
            elif w.startswith('build/'):
                w = os.path.join(self.build, w[len('build/'):])
            out.append(w)
        return out

    def dry_parse(self, where, words):
        """dwarfsample's own parser over the command's options."""
        argv = self.subst(words)
        argv[0] = self.ds
        end = argv.index('--') if '--' in argv else len(argv)
        r = run(argv[:end] + ['--help'], env=self.env)
        if r.returncode != 0:
            self.fail(where, f'dwarfsample does not accept {" ".join(words)!r}: '
                      f'{r.stderr.strip()[:300]}')
            return False
        return True

    def check_option_mention(self, where, span):
        first = span.split()[0].rstrip(',.')
        first = first.split('=')[0] if first.startswith('--') else first
        if first in FOREIGN_OPTIONS or span.split()[0] in FOREIGN_OPTIONS:
            return
        if not re.match(r'^(--[a-z][a-z0-9-]*|-[a-zA-Z])$', first):
            return
        if first not in self.options:
            self.fail(where, f'`{span}` names an option no dwarfsample --help lists')

    # --- the rules for commands that do not run as they are
    def check_apt(self, where, words, raw):
        if words[1:] == ['update']:
            return
        m = re.search(r"\$\(grep -v '\^#' ([^ )]+)\)", raw)
        if words[1] != 'install' or not m:
            self.fail(where, f'an apt-get line check-readme does not know: {raw}')
            return
        pkgfile = os.path.join(self.src, m.group(1))
        if not os.path.isfile(pkgfile):
            self.fail(where, f'{m.group(1)} does not exist')
            return
        pkgs = [ln.strip() for ln in open(pkgfile) if ln.strip() and not ln.startswith('#')]
        if not pkgs:
            self.fail(where, f'{m.group(1)} lists no package')
        # .ci/run installs these lists before the suites run: each is here.
        for p in pkgs:
            r = run(['dpkg-query', '-W', '-f=${Status}', p])
            if 'install ok installed' not in r.stdout:
                self.fail(where, f'{m.group(1)} names {p}, which is not installed here '
                          f'(is it a Debian 12 package?)')

    def check_meson(self, where, words):
        sub = words[1]
        r = run(['meson', sub, '--help'])
        if r.returncode:
            self.fail(where, f'meson has no {sub!r}')
            return
        for w in words[2:]:
            if w.startswith('-') and not re.search(r'(^|[ ,\[])' + re.escape(w.split('=')[0]) +
                                                   r'\b', r.stdout, re.M):
                self.fail(where, f'meson {sub} has no option {w}')
        if '-C' in words and words[words.index('-C') + 1] != 'build':
            self.fail(where, 'the build directory is build/ everywhere')

    def check_agent_opts(self, where, raw):
        m = re.search(r"echo '([A-Z_]+)=(.*)' > (\S+)", raw)
        unit = open(os.path.join(self.src, 'tools/agent/dwarfsample-agent.service.in')).read()
        if not m:
            self.fail(where, f'an echo line check-readme does not know: {raw}')
            return
        var, value, path = m.groups()
        if f'EnvironmentFile=-{path}' not in unit or f'${var}' not in unit:
            self.fail(where, f'the unit does not read {var} from {path}')
        start = re.search(r'^ExecStart=\S+/dwarfsample (.*)$', unit, re.M).group(1)
        words = ['dwarfsample'] + [w for w in shlex.split(start) if not w.startswith('$')]
        self.dry_parse(where, words + shlex.split(value))

    def check_systemctl(self, where, words):
        unit = os.path.join(self.build, 'tools', words[-1] + '.service')
        if not os.path.isfile(unit):
            self.fail(where, f'no {words[-1]}.service is built (tools/meson.build installs it)')

    # --- commands
    def check_line(self, n, line):
        where = f'README.md:{n}'
        for raw, words in split_commands(line):
            prog = words[0]
            if prog == 'apt-get':
                self.check_apt(where, words, raw)
            elif prog == 'meson':
                self.check_meson(where, words)
            elif prog == '.ci/run':
                path = os.path.join(self.src, '.ci/run')
                if not os.access(path, os.X_OK):
                    self.fail(where, '.ci/run is not an executable file')
                text = open(path).read()
                for lst in ('.ci/debian-packages-build', '.ci/debian-packages'):
                    if not re.search(re.escape(lst) + r'\b(?!-)', text):
                        self.fail(where, f'.ci/run does not install {lst}')
            elif prog == 'systemctl':
                self.check_systemctl(where, words)
            elif prog == 'echo':
                self.check_agent_opts(where, raw)
            elif prog in ('dwarfsample', 'build/tools/dwarfsample'):
                if prog.startswith('build/') and not os.path.isfile(self.subst([prog])[0]):
                    self.fail(where, f'{prog} is not what the build makes')
                if self.dry_parse(where, words) and not self.parse_only:
                    self.run_dwarfsample(where, words)
            else:
                self.fail(where, f'no rule to check {prog!r}: teach check-readme.py')

    def why_not_run(self, words):
        """None when the command runs here, else why it cannot."""
        after = words[words.index('--') + 1:] if '--' in words else []
        if len(words) > 1 and words[1] == 'agent':
            return 'the agent runs until stopped and ships to a backend'
        if after and after[0] in ('python3', 'node'):
            return f'needs the reader\'s {after[-1]} (and CPython 3.12+ or node)'
        if '--python' in words:
            return 'needs a running CPython 3.12+'
        verb = words[1] if len(words) > 1 and not words[1].startswith('-') else ''
        if verb != 'report' and not {'--', '-p', '-a'} & set(words):
            return 'options, not a whole command: no target'
        return None

    def run_dwarfsample(self, where, words):
        reason = self.why_not_run(words)
        if reason:
            self.notes.append(f'{where}: parsed, not run: {reason}')
            return
        if tuple(words) in self.ran:
            return
        self.ran.add(tuple(words))
        target = subprocess.Popen([self.demo, '60', '1'], stdout=subprocess.DEVNULL) \
            if 'PID' in words or 'TID' in words else None
        argv = self.subst(words, target and target.pid)
        argv[0] = self.ds
        for i, w in enumerate(argv[:-1]):
            if w == '-d' and (('--' not in argv) or i < argv.index('--')):
                argv[i + 1] = '1'
        # A command that only sleeps is a duration too (stat -p PID -- sleep 5).
        if '--' in argv and argv[argv.index('--') + 1:-1] == ['sleep'] \
                and re.fullmatch(r'[0-9.]+', argv[-1]):
            argv[-1] = '1'
        began = time.monotonic()
        try:
            r = run(argv, cwd=self.tmp, env=self.env)
        except subprocess.TimeoutExpired:
            self.fail(where, f'{" ".join(words)} did not end within {TIMEOUT} s')
            return
        finally:
            if target:
                target.kill()
                target.wait()
        if r.returncode and re.search(r'perf_event_open.*(denied|paranoid)|not permitted',
                                      r.stderr):
            print(f'SKIP: the kernel refuses perf_event_open: {r.stderr.strip()[:200]}')
            sys.exit(77)
        if r.returncode:
            self.fail(where, f'{" ".join(words)} exited {r.returncode}: {r.stderr.strip()[-400:]}')
            return
        if '-o' in argv:
            out = os.path.join(self.tmp, argv[argv.index('-o') + 1])
            if not os.path.isfile(out) or os.path.getsize(out) == 0:
                self.fail(where, f'{" ".join(words)} wrote no {argv[argv.index("-o") + 1]}')
        if words[-1].endswith('dwarfsample-demo'):
            self.demo_stderr = r.stderr
        self.notes.append(f'{where}: ran {" ".join(words)} '
                          f'({time.monotonic() - began:.1f} s)')

    def check_summary(self, texts):
        quoted = [body for _, marker, body in texts if 'check-readme: the demo\'s summary' in marker]
        if len(quoted) != 1:
            self.fail('README.md', 'one text block must quote the demo\'s summary '
                      '(<!-- check-readme: the demo\'s summary --> before it)')
            return
        if self.parse_only:
            return
        if self.demo_stderr is None:
            self.fail('README.md', 'the quick start did not profile the demo')
            return
        got = self.demo_stderr.split('\n')
        for line in quoted[0]:
            pat = ''.join('[0-9.]+' if re.match(r'[0-9]', tok) else re.escape(tok)
                          for tok in re.split(r'([0-9][0-9.]*)', line))
            pat = pat.replace(re.escape('demo.svg'), r'\S*demo\.svg')
            if not any(re.match(pat, g) for g in got):
                self.fail('README.md', f'the demo does not print the quoted line {line!r}; '
                          f'it printed:\n{self.demo_stderr}')

    def check_quick_start(self, text, sh):
        heads = [m.group(1) for m in re.finditer(r'^## (.*)$', text, re.M)]
        if not heads or heads[0] != 'Quick start':
            self.fail('README.md', 'the first section must be "Quick start"')
            return
        section = text.split('## Quick start', 1)[1].split('\n## ', 1)[0]
        blocks = re.findall(r'^```sh\n(.*?)^```', section, re.M | re.S)
        if len(blocks) != 2 or any(len(b.strip().split('\n')) != 1 for b in blocks):
            self.fail('README.md', 'the quick start is exactly two one-line commands')
            return
        first, second = blocks[0].strip(), blocks[1].strip()
        if '.ci/debian-packages-build' not in first or \
                not first.endswith('-- build/tools/dwarfsample-demo'):
            self.fail('README.md', 'the first command installs .ci/debian-packages-build, '
                      'builds and profiles build/tools/dwarfsample-demo')
        if second != '.ci/run':
            self.fail('README.md', 'the second command is .ci/run')

    def check(self, readme):
        text = open(readme).read()
        sh, texts, inline, errors = parse_readme(text)
        self.failures += [f'README.md {e}' for e in errors]
        self.check_quick_start(text, sh)
        for n, line in sh:
            try:
                self.check_line(n, line)
            except Fail as e:
                self.fail(f'README.md:{n}', str(e))
        for n, span in inline:
            where = f'README.md:{n}'
            if re.match(r'^dwarfsample( |$)', span):
                # In the order they come: the perf table's record writes
                # the perf.data its report rows read.
                if self.dry_parse(where, shlex.split(span)) and not self.parse_only:
                    self.run_dwarfsample(where, shlex.split(span))
            elif span.startswith('-'):
                self.check_option_mention(where, span)
        self.check_summary(texts)
        # The links of the README and of the docs it moved text to.
        check_links(readme, self.src, self.fail)
        docs = os.path.join(self.src, 'docs')
        for md in sorted(f for f in os.listdir(docs) if f.endswith('.md')):
            check_links(os.path.join(docs, md), docs, self.fail)
        nr_dwarfsample = sum(1 for _, s in inline if s.startswith('dwarfsample'))
        return len(sh), nr_dwarfsample


def main(argv):
    self_check = parse_only = False
    readme = None
    while argv and argv[0].startswith('--'):
        opt = argv.pop(0)
        if opt == '--self-check':
            self_check = True
        elif opt == '--parse-only':
            parse_only = True
        elif opt == '--readme':
            readme = argv.pop(0)
    src, build, ds, demo = (os.path.abspath(a) for a in argv)
    if self_check:
        return self_test(src, build, ds, demo)
    c = Checker(src, build, ds, demo, parse_only)
    try:
        lines, spans = c.check(readme or os.path.join(src, 'README.md'))
    finally:
        c.close()
    for n in c.notes:
        print(n)
    if c.failures:
        for f in c.failures:
            print('FAIL:', f)
        return 1
    print(f'PASS: {lines} command lines and {spans} inline dwarfsample commands of README.md '
          f'{"parse" if parse_only else "parse and run or are checked"}')
    return 0


def self_test(src, build, ds, demo):
    """The check fails on a README whose options the CLI does not know."""
    text = open(os.path.join(src, 'README.md')).read()
    # (what, text, its replacement, what the check must say)
    doctored = [
        ('a renamed option in a sh block', '-p PID -d 10', '-p PID --time 10',
         "unrecognized option '--time'"),
        ('a renamed option in a table', '`dwarfsample stat -a -- CMD`',
         '`dwarfsample stat --all-cpuz -- CMD`', "unrecognized option '--all-cpuz'"),
        ('a renamed option in prose', '`--off-cpu-stack-size`', '`--offcpu-stack-size`',
         '`--offcpu-stack-size` names an option no dwarfsample --help lists'),
        ('a bad value', '`dwarfsample report -i perf.data`',
         '`dwarfsample report -i perf.data -F comm,nosuchfield`', "unknown field 'nosuchfield'"),
        ('a third quick-start command', '\n.ci/run\n', '\n.ci/run\nmeson test -C build\n',
         'the quick start is exactly two one-line commands'),
        ('a C block', '```sh\ndwarfsample -o profile.svg', '```c\ndwarfsample -o profile.svg',
         'a code block must be ```sh or ```text, not ```c'),
        ('a link to no heading', '(#lost-samples)', '(#lost-sample)',
         'the link #lost-sample reaches no heading'),
        ('a link to no file', '(docs/agent.md)', '(docs/agents.md)',
         'the link docs/agents.md reaches no file'),
    ]
    bad = 0
    tmp = tempfile.mkdtemp(prefix='check-readme-self.')
    try:
        for what, old, new, says in doctored:
            if old not in text:
                print(f'FAIL: self-check: README.md has no {old!r} to doctor ({what})')
                bad += 1
                continue
            path = os.path.join(tmp, 'README.md')
            with open(path, 'w') as f:
                f.write(text.replace(old, new, 1))
            r = run([sys.executable, __file__, '--parse-only', '--readme', path,
                     src, build, ds, demo], timeout=120)
            fails = [ln for ln in r.stdout.splitlines() if ln.startswith('FAIL:')]
            if r.returncode != 1 or len(fails) != 1 or says not in fails[0]:
                print(f'FAIL: self-check: {what}: the check should fail once, saying '
                      f'{says!r}; it exited {r.returncode}:\n{r.stdout}{r.stderr}')
                bad += 1
            else:
                print(f'PASS: self-check: {what} fails it: {fails[0][:200]}')
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
