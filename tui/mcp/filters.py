"""The MCP tools' arguments that OpenClaw's own tools take today (docs/mcp.md): paging by
``offset`` and ``sessions_list``'s filters, as a model reads them in the input schema. Strict,
like the server's other arguments: `true` is not an offset nor "yes" a flag."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictBool, StrictInt, StrictStr

Offset = Annotated[StrictInt | None, Field(
    description="skip this many of the newest messages (the previous answer's nextOffset) to "
    "page back through a long conversation; not with messageId",
    json_schema_extra={"minimum": 0},
)]
ListOffset = Annotated[StrictInt | None, Field(
    description="skip this many sessions (the previous answer's nextOffset)",
    json_schema_extra={"minimum": 0},
)]
Search = Annotated[StrictStr | None, Field(
    description="only sessions whose label or title contains this text (any case)"
)]
Kinds = Annotated[list[Literal["main", "group", "cron", "hook", "node", "other"]] | None, Field(
    description="only sessions of these kinds (from the session key: main, group, cron, hook, "
    "node, other)"
)]
ActiveMinutes = Annotated[StrictInt | None, Field(
    description="only sessions active in the last this many minutes",
    json_schema_extra={"minimum": 1},
)]
Label = Annotated[StrictStr | None, Field(description="only sessions with exactly this label")]
Archived = Annotated[StrictBool | None, Field(
    description="true: only sessions in cold archives; false: only the others"
)]
