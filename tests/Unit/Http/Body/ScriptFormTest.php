<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Body;

use Kiln\Http\Body\BodyLimits;
use Kiln\Http\Body\ScriptForm;
use PHPUnit\Framework\TestCase;

final class ScriptFormTest extends TestCase
{
    public function testAnUrlencodedBodyKeepsThePairPastMaxInputVarsAsPhpDoes(): void
    {
        // Empty pieces count (PHP's main/php_variables.c); the one that goes past the limit is kept, then PHP stops.
        $form = ScriptForm::read('application/x-www-form-urlencoded', 20, 'a=1&&b[]=2&b[]=3&c=4', new BodyLimits(fields: 3, asPhp: true));
        self::assertSame(['a' => '1', 'b' => ['2', '3']], $form->post);
        self::assertSame(['PHP Request Startup: Input variables exceeded 3. To increase the limit change max_input_vars in php.ini.'], $form->warnings);
    }

    public function testAnUrlencodedBodyWithinMaxInputVarsHasNoWarning(): void
    {
        $form = ScriptForm::read('application/x-www-form-urlencoded', 8, 'a=1&b=2&', new BodyLimits(fields: 2, asPhp: true));
        self::assertSame(['a' => '1', 'b' => '2'], $form->post);
        self::assertSame([], $form->warnings);
    }

    public function testABodyOverPostMaxSizeIsNotRead(): void
    {
        $limits = new BodyLimits(postBytes: 4, asPhp: true);
        $form = ScriptForm::read('application/x-www-form-urlencoded', 5, 'a=1&b', $limits);
        self::assertSame([], $form->post);
        self::assertSame(['PHP Request Startup: POST Content-Length of 5 bytes exceeds the limit of 4 bytes'], $form->warnings);
        $multipart = ScriptForm::read('multipart/form-data; boundary=B', 5, '--B--', $limits);
        self::assertSame(['POST Content-Length of 5 bytes exceeds the limit of 4 bytes'], $multipart->warnings, 'PHP says it without the prefix there');
    }
}
