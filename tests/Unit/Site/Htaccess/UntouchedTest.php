<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Site\Htaccess;

use PHPUnit\Framework\TestCase;

/** HtaccessRules::untouched(): the document root's shortcut for paths no .htaccess file applies to. */
final class UntouchedTest extends TestCase
{
    private float $now = 1000.0;

    public function testAPathWithoutAnyHtaccessIsUntouchedAndAsksTheFileSystemAtMostOnceASecond(): void
    {
        $rules = Fixtures::rules(['a/f.txt' => 'x'], $fs, fn(): float => $this->now);
        self::assertTrue($rules->untouched('/a/f.txt'));
        $calls = $fs->calls;
        for ($i = 0; $i < 9; $i++) {
            $this->now += 0.1;
            self::assertTrue($rules->untouched('/a/f.txt'));
        }
        self::assertSame($calls, $fs->calls);
    }

    public function testAnHtaccessAnywhereOnThePathMakesItTouched(): void
    {
        $rules = Fixtures::rules(['a/.htaccess' => 'Header set X y', 'a/f.txt' => 'x', 'b/f.txt' => 'x'], $fs, fn(): float => $this->now);
        self::assertFalse($rules->untouched('/a/f.txt'));
        self::assertFalse($rules->untouched('/a/missing/deeper'));
        self::assertTrue($rules->untouched('/b/f.txt'));
        self::assertFalse($rules->untouched('/a/f.txt', false), 'decoded paths too');
    }

    public function testAnHtaccessRemovedCountsAsGoneOnceTheAnswerIsASecondOld(): void
    {
        $rules = Fixtures::rules(['a/.htaccess' => 'Header set X y', 'a/f.txt' => 'x'], $fs, fn(): float => $this->now);
        self::assertFalse($rules->untouched('/a/f.txt'));
        $fs->remove(Fixtures::ROOT . '/a/.htaccess');
        $this->now += 0.5;
        self::assertFalse($rules->untouched('/a/f.txt'), 'within the second');
        $this->now += 0.6;
        self::assertTrue($rules->untouched('/a/f.txt'));
        $this->now -= 10.0;
        self::assertTrue($rules->untouched('/a/f.txt'), 'a clock that went back asks again');
    }

    public function testEncodedDirectoryNamesAreDecodedFirst(): void
    {
        $rules = Fixtures::rules(['my dir/.htaccess' => 'Require all denied', 'my dir/f.txt' => 'x'], $fs, fn(): float => $this->now);
        self::assertFalse($rules->untouched('/my%20dir/f.txt'));
        self::assertFalse($rules->untouched('/my dir/f.txt', false));
    }

    public function testAFileCreatedLaterCountsOnceTheEntriesBehindTheAnswerAreRechecked(): void
    {
        $rules = Fixtures::rules(['a/f.txt' => 'x'], $fs, fn(): float => $this->now);
        self::assertTrue($rules->untouched('/a/f.txt'));
        $this->now += 0.5;
        self::assertTrue($rules->untouched('/b'), 'another path, answered from the same root entry');
        $fs->write(Fixtures::ROOT . '/.htaccess', 'Require all denied');
        self::assertTrue($rules->untouched('/a/f.txt'), 'within the second');
        $this->now += 0.6;
        self::assertFalse($rules->untouched('/b'), 'the root entry is a second old: checked again');
        self::assertFalse($rules->untouched('/a/f.txt'));
    }

    public function testMalformedPathsAndFilesWithWarningsAreLeftToForRequest(): void
    {
        $rules = Fixtures::rules(['a/.htaccess' => '', 'b/.htaccess' => 'AddHandler cgi-script .cgi'], $fs, fn(): float => $this->now);
        self::assertFalse($rules->untouched('/a/%zz'));
        self::assertTrue($rules->untouched('/a/x'), 'an empty file changes nothing');
        self::assertFalse($rules->untouched('/b/x'), 'its warnings are for forRequest() to hand over');
        self::assertCount(1, $rules->takeWarnings());
    }
}
