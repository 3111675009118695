"""The section every page opens with: what the root the page is built for holds of the stores the
page reads (``afr status`` of each), or, when it holds none of them, which stores are missing and
the command that makes them. A paper's page and an experiment's page say it the same way."""

from __future__ import annotations

from collections.abc import Sequence

from afr_cli.publish.context import ReportContext
from afr_cli.publish.frames import StoreMissing
from afr_cli.publish.page_words import listing
from afr_cli.publish.store_words import holdings, holdings_text


def held_section(ctx: ReportContext, stores: Sequence[str], make: str) -> str:
    """Markdown: the holdings sentence of ``stores`` under the context's root and the stores it
    lacks, or the line naming them all and ``make``, the command that writes them."""
    stores = list(dict.fromkeys(stores))
    lacking = [s for s in stores if ctx.store(s) is None]
    named = listing([f"`{ctx.shown_store(s)}`" for s in lacking])
    try:
        text = holdings_text(holdings(ctx, stores))
    except StoreMissing:
        return (
            f"**On this results root** (`{ctx.shown}`): no store of this page yet; it reads {named} "
            f"(`{make}` writes them)."
        )
    if lacking:
        text += f" Not held under `{ctx.shown}`: {named}."
    return f"**On this results root** (`{ctx.shown}`): {text}"
