<?php

declare(strict_types=1);

namespace Kiln\Db\Mysql\Internal;

/** @internal where MysqlCodec is in the conversation */
enum CodecState
{
    case Greeting;
    case Authenticating;
    case Ready;
    case ResponseHeader;
    case ColumnDefinitions;
    case ColumnsEof;
    case Rows;
    case PrepareParams;
    case Closed;
}
