<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Isolation\FastCgi\Internal;

use Kiln\Isolation\FastCgi\Internal\RequestWriter;
use Kiln\Isolation\FastCgi\RecordEncoder;
use Kiln\Isolation\FastCgi\RecordType;
use Kiln\Isolation\FastCgi\Role;
use PHPUnit\Framework\TestCase;

final class RequestWriterTest extends TestCase
{
    public function testTheRecordsSpelledOutAreWhatTheEncoderMakes(): void
    {
        self::assertSame(RecordEncoder::beginRequest(RequestWriter::REQUEST_ID, Role::Responder, true), RequestWriter::BEGIN_KEEP);
        self::assertSame(RecordEncoder::beginRequest(RequestWriter::REQUEST_ID, Role::Responder, false), RequestWriter::BEGIN);
        self::assertSame(RecordEncoder::record(RecordType::Stdin->value, RequestWriter::REQUEST_ID), RequestWriter::STDIN_END);
    }
}
