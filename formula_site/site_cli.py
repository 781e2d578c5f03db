"""`formula site build|serve` and `formula export fhir`: the published report and its FHIR resources."""
from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path
from typing import Any

from registry.cliutil import add_root, load_registry
from registry.terminal import install_hint, tell


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("site",
                       description="The audit report as a static mkdocs-material site, built offline from the "
                       "registry, the audits and the stored runs. Needs the extra: " + install_hint("site") + ".")
    ssub = p.add_subparsers(dest="site", metavar="ACTION")
    ssub.required = True
    b = ssub.add_parser("build", help="generate the pages and build the site (mkdocs --strict)",
                        description="Generate the pages and build the site with mkdocs in strict mode. Runs "
                        "default to every run folder under the registry's results/ (for the registry shipped with "
                        "the package: the runs shipped with it, results/embedded/).")
    _build_args(b)
    b.set_defaults(handler=cmd_build)
    s = ssub.add_parser("serve", help="build, then serve the site on 127.0.0.1 for a preview",
                        description="Build the site, then serve the built folder on the loopback address.")
    _build_args(s)
    s.add_argument("--port", type=_port, default=8000, help="port on 127.0.0.1, 1-65535 (default 8000)")
    s.set_defaults(handler=cmd_serve)

    e = sub.add_parser("export",
                       description="Export the registry: `fhir` writes one FHIR R4 Library per calculator version.")
    esub = e.add_subparsers(dest="export", metavar="FORMAT")
    esub.required = True
    f = esub.add_parser("fhir", help="one FHIR R4 Library resource (JSON) per released calculator version",
                        description="Write Library-<slug>-<version>.json for every active and superseded version.")
    f.add_argument("--out", type=Path, required=True, help="folder to write the resources into")
    f.add_argument("--base", default=None, help="canonical URL base (default urn:formula-registry:calculator:)")
    add_root(f)
    f.set_defaults(handler=cmd_export_fhir)


def _build_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--results", nargs="+", action="extend", default=None, metavar="DIR",
                   help="stored run folders (each holds manifest.json + results.jsonl): several folders, shell "
                   "globs (runs/*/) or quoted globs ('runs/**/'), the option repeatable (default: every run under "
                   "the registry's results/)")
    p.add_argument("--compare", action="append", default=None, metavar="A:B",
                   help="paired gap A minus B on the results page, runs by folder name or arm; repeatable "
                   "(default: every run against the gold-solve run)")
    p.add_argument("--out", type=Path, default=None, help="output folder, replaced by every build (default: build/site "
                   "of the registry, or of the current folder for the copy installed with the package)")
    p.add_argument("--on", default=None, metavar="YYYY-MM-DD", help="date the review status is computed for "
                   "(default today)")
    p.add_argument("--site-url", default=None, metavar="URL", type=_site_url,
                   help="where the site will be served, e.g. https://example.org/formulas/: the 404 page, which a "
                   "server shows for any missing path, finds the site's pages and assets under its path (default: "
                   "the server's root)")
    add_root(p)


def _port(text: str) -> int:
    """A TCP port number (argparse type): a usage error, not an OverflowError, when out of range."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 1 to 65535, got {port}")
    return port


def _site_url(text: str) -> str:
    """An http(s) URL (argparse type); a folder URL, so that it ends with '/'."""
    from urllib.parse import urlsplit

    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise argparse.ArgumentTypeError(f"expected an http(s) URL such as https://example.org/formulas/, got {text!r}")
    return text if text.endswith("/") else text + "/"


def _date(text: str | None) -> dt.date | None:
    if text is None:
        return None
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"--on must be a date YYYY-MM-DD, got {text!r}") from None


def _build(args: argparse.Namespace):
    try:
        on = _date(args.on)
    except ValueError as e:
        tell(f"error: {e}", file=sys.stderr)
        return None
    # the registry first: one that fails validation is refused before the site's libraries load (matplotlib,
    # mkdocs, pandas: about 150 MB), so a hostile registry costs `site build` what it costs `validate`
    registry = load_registry(args.root, cached=True)
    try:
        from formula_site.build import SiteError, build
    except ImportError as e:
        tell(f"error: the site needs its extra ({e.name} is missing): {install_hint('site')}", file=sys.stderr)
        return None
    try:
        from audit.runs import RunError, expand_run_dirs

        try:
            results = None if args.results is None else expand_run_dirs(args.results, option="--results")
        except RunError as e:
            raise SiteError(str(e)) from None
        return build(results, args.out or default_out(args.root), on=on, compare=args.compare, registry=registry,
                     site_url=args.site_url)
    except ImportError as e:
        tell(f"error: the site needs its extra ({e.name} is missing): {install_hint('site')}", file=sys.stderr)
    except (SiteError, OSError) as e:
        tell(f"error: {e}", file=sys.stderr)
    return None


def default_out(root: Path | None) -> Path:
    """build/site of the registry the site is built from (found as every command finds it); of the current
    folder when that registry is the read-only copy installed with the package."""
    from registry.loader import INSTALLED, find_root

    found = find_root(root)
    return (Path.cwd() if found.how == INSTALLED else found.path) / "build" / "site"


def cmd_build(args: argparse.Namespace) -> int:
    from registry.cliutil import registry_line
    from registry.loader import shown
    from registry.terminal import say

    res = _build(args)
    if res is None:
        return 1
    say(registry_line(args.root))
    print(f"open {shown(res.out / 'index.html')}")
    # last, so that a log's final line (CI, `| tail -1`) says how long the build took
    from registry.counted_nouns import counted

    print(f"built {res.pages} pages ({counted(res.runs, 'run')}, {res.fhir} FHIR resources) in {res.seconds:.1f} s")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    import http.server

    from formula_site.serve import PreviewServer, SiteHandler

    if args.site_url:
        tell("error: --site-url is for `site build` (a site served elsewhere, under a path); `site serve` previews "
              "the site at the server's root", file=sys.stderr)
        return 2
    folder: dict[str, str] = {}  # filled in once the site is built; the port is taken before the (slow) build

    def handler(*a: Any, **kw: Any) -> http.server.SimpleHTTPRequestHandler:
        return SiteHandler(*a, directory=folder["out"], **kw)

    try:
        server = PreviewServer(("127.0.0.1", args.port), handler)
    except OSError as e:
        tell(f"error: cannot serve on 127.0.0.1:{args.port}: {e.strerror or e}; choose another --port",
              file=sys.stderr)
        return 1
    res = _build(args)
    if res is None:
        server.server_close()
        return 1
    folder["out"] = str(res.out)
    from registry.counted_nouns import counted

    print(f"built {res.pages} pages ({counted(res.runs, 'run')}) in {res.seconds:.1f} s")
    print(f"serving {res.out} on http://127.0.0.1:{args.port}/ (Ctrl-C to stop)", flush=True)
    with server:
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
    return 0


def cmd_export_fhir(args: argparse.Namespace) -> int:
    from formula_site import fhir

    reg = load_registry(args.root)
    if args.out.exists() and not args.out.is_dir():
        tell(f"error: --out {args.out} is a file, not a folder", file=sys.stderr)
        return 1
    try:
        written = fhir.export(reg, args.out, base=args.base or fhir.DEFAULT_BASE)
    except OSError as e:
        tell(f"error: cannot write to {args.out}: {e}", file=sys.stderr)
        return 1
    from registry.cliutil import registry_line
    from registry.terminal import say

    say(registry_line(args.root))
    say(f"wrote {len(written)} FHIR R4 Library resources to {args.out}")
    return 0
