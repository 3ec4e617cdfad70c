"""The template tag through which a scheme's templates call what its page declares
(``schemes.base.Page.helpers``): the scheme's own code stays in its package."""

from __future__ import annotations

from typing import Any

from django import template

from schemes import get_scheme

register = template.Library()


@register.simple_tag
def page_helper(scheme: str, helper: str, *values: Any) -> Any:
    """What the page of the registered ``scheme`` gives for ``values`` through its ``helper``.

    ``{% page_helper "<scheme>" "<helper>" row.text as pieces %}``; a scheme or a helper that is not
    declared is an error naming both (a template's mistake, never the annotator's).
    """
    found = get_scheme(scheme).page.helpers.get(helper)
    if found is None:
        declared = ", ".join(sorted(get_scheme(scheme).page.helpers)) or "none"
        raise template.TemplateSyntaxError(
            f"the page of the scheme {scheme!r} declares no helper {helper!r}; declared: {declared}"
        )
    return found(*values)
