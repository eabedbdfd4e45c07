<?php

declare(strict_types=1);

namespace Kiln\Isolation\FastCgi;

/** Bytes that are not valid FastCGI (wrong version, impossible lengths, a record where none may be). */
final class ProtocolException extends FastCgiException {}
