<?php

declare(strict_types=1);

namespace Kiln\Tests\Unit\Http\Multipart;

use Kiln\Http\BadRequestBodyException;
use Kiln\Http\Body\BodyLimits;
use Kiln\Http\Multipart\MultipartParser;
use Kiln\Http\UploadedFile;
use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;

final class MultipartParserTest extends TestCase
{
    private const B = 'XyZ-boundary';

    /** @var list<UploadedFile> */
    private array $uploads = [];

    protected function tearDown(): void
    {
        foreach ($this->uploads as $file) {
            $file->discard();
        }
    }

    /** @return iterable<string, array{bool}> */
    public static function feeding(): iterable
    {
        yield 'whole' => [false];
        yield 'byte by byte' => [true];
    }

    /**
     * @return array{list<array{string, string}>, list<array{string, UploadedFile}>}
     */
    private function parse(string $body, bool $byteByByte, ?BodyLimits $limits = null, string $boundary = self::B): array
    {
        $parser = new MultipartParser($boundary, $limits ?? new BodyLimits());
        if ($byteByByte) {
            for ($i = 0, $n = \strlen($body); $i < $n; $i++) {
                $parser->feed($body[$i]);
            }
        } else {
            $parser->feed($body);
        }
        $result = $parser->finish();
        foreach ($result[1] as [, $file]) {
            $this->uploads[] = $file;
        }
        return $result;
    }

    /** @param list<array{string, string, ?string}> $parts name, content, filename */
    private static function body(array $parts, string $boundary = self::B): string
    {
        $body = '';
        foreach ($parts as [$name, $content, $filename]) {
            $body .= "--$boundary\r\nContent-Disposition: form-data; name=\"$name\""
                . ($filename === null ? '' : "; filename=\"$filename\"\r\nContent-Type: application/octet-stream")
                . "\r\n\r\n$content\r\n";
        }
        return $body . "--$boundary--\r\n";
    }

    #[DataProvider('feeding')]
    public function testUnderPhpsRulesWhatIsPastALimitIsDroppedWithPhpsWarning(bool $byteByByte): void
    {
        $limits = new BodyLimits(fields: 1, parts: 5, files: 1, fileSize: 3, asPhp: true);
        $parser = new MultipartParser(self::B, $limits);
        $body = self::body([['a', '1', null], ['b', '2', null], ['e', '', ''], ['f', 'abcd', 'f.txt'], ['g', 'x', 'g.txt'], ['h', '3', null]]);
        foreach ($byteByByte ? str_split($body) : [$body] as $piece) {
            $parser->feed($piece);
        }
        [$fields, $files] = $parser->finish();
        foreach ($files as [, $file]) {
            $this->uploads[] = $file;
        }
        self::assertSame([['a', '1']], $fields, 'fields past max_input_vars are dropped');
        self::assertSame(['e', 'f'], array_column($files, 0), 'an empty file input does not count; files past max_file_uploads are dropped');
        self::assertSame(\UPLOAD_ERR_NO_FILE, $files[0][1]->error());
        self::assertSame(\UPLOAD_ERR_INI_SIZE, $files[1][1]->error());
        self::assertSame([
            'PHP Request Startup: Input variables exceeded 1. To increase the limit change max_input_vars in php.ini.',
            'Maximum number of allowable file uploads has been exceeded',
            'PHP Request Startup: Multipart body parts limit exceeded 5. To increase the limit change max_multipart_body_parts in php.ini.',
        ], $parser->warnings());
    }

    #[DataProvider('feeding')]
    public function testFieldsAndFilesAreParsedInOrder(bool $byteByByte): void
    {
        $data = "line1\r\nline2\r\n--XyZ-boundar not a delimiter\r\n\r\n";
        $body = "preamble\r\n" . self::body([['a', 'one', null], ['doc', $data, 'report.txt'], ['a', '', null]]) . 'epilogue';
        [$fields, $files] = $this->parse($body, $byteByByte);
        self::assertSame([['a', 'one'], ['a', '']], $fields);
        self::assertCount(1, $files);
        [$name, $file] = $files[0];
        self::assertSame('doc', $name);
        self::assertSame('report.txt', $file->clientFilename());
        self::assertSame('application/octet-stream', $file->clientMediaType());
        self::assertSame(\UPLOAD_ERR_OK, $file->error());
        self::assertSame(\strlen($data), $file->size());
        self::assertSame($data, $file->contents());
        self::assertStringStartsWith(sys_get_temp_dir(), $file->path());
    }

    #[DataProvider('feeding')]
    public function testFilenameStarWinsAndDirectoriesAreDropped(bool $byteByByte): void
    {
        $body = "--" . self::B . "\r\ncontent-disposition: form-data; name=\"f\"; filename=\"C:\\dir\\euro.txt\"; filename*=UTF-8''%E2%82%AC%20rates.txt\r\n\r\nx\r\n"
            . "--" . self::B . "\r\nContent-Disposition: form-data; name=\"g\"; filename=\"../../etc/passwd\"\r\n\r\ny\r\n"
            . "--" . self::B . "\r\nContent-Disposition: form-data; name=\"h\"; filename=\"C:\\dir\\a.txt\"\r\n\r\nz\r\n"
            . "--" . self::B . "\r\nContent-Disposition: form-data; name=\"i\"; filename*=iso-8859-1'en'%E9t%E9.txt\r\n\r\nw\r\n"
            . "--" . self::B . "--";
        [, $files] = $this->parse($body, $byteByByte);
        self::assertSame(['€ rates.txt', 'passwd', 'a.txt', 'été.txt'], array_map(static fn(array $f): string => $f[1]->clientFilename(), $files));
    }

    #[DataProvider('feeding')]
    public function testTheFullPathKeepsTheFoldersOfAFolderUpload(bool $byteByByte): void
    {
        $body = "--" . self::B . "\r\nContent-Disposition: form-data; name=\"d[]\"; filename=\"photos/2024/x.jpg\"\r\n\r\nx\r\n"
            . "--" . self::B . "\r\nContent-Disposition: form-data; name=\"e\"; filename=\"plain.txt\"\r\n\r\ny\r\n"
            . "--" . self::B . "--";
        [, $files] = $this->parse($body, $byteByByte);
        self::assertSame(['x.jpg', 'plain.txt'], array_map(static fn(array $f): string => $f[1]->clientFilename(), $files));
        self::assertSame(['photos/2024/x.jpg', 'plain.txt'], array_map(static fn(array $f): string => $f[1]->clientFullPath(), $files));
    }

    #[DataProvider('feeding')]
    public function testABoundaryAtTheVeryStartAndTransportPaddingAreAccepted(bool $byteByByte): void
    {
        $body = "--" . self::B . " \t\r\nContent-Disposition: form-data; name=\"q\"\r\n\r\nv\r\n--" . self::B . '--';
        self::assertSame([['q', 'v']], $this->parse($body, $byteByByte)[0]);
    }

    #[DataProvider('feeding')]
    public function testAFileOverTheLimitArrivesWithIniSizeAndNoData(bool $byteByByte): void
    {
        $limits = new BodyLimits(fileSize: 10);
        [$fields, $files] = $this->parse(self::body([['big', str_repeat('x', 11), 'big.bin'], ['small', '0123456789', 's.bin'], ['after', 'ok', null]]), $byteByByte, $limits);
        self::assertSame(\UPLOAD_ERR_INI_SIZE, $files[0][1]->error());
        self::assertSame(0, $files[0][1]->size());
        self::assertSame(\UPLOAD_ERR_OK, $files[1][1]->error());
        self::assertSame([['after', 'ok']], $fields);
    }

    public function testMaxFileSizeFieldGivesFormSize(): void
    {
        [, $files] = $this->parse(self::body([['MAX_FILE_SIZE', '3', null], ['f', 'abcd', 'f.txt']]), false);
        self::assertSame(\UPLOAD_ERR_FORM_SIZE, $files[0][1]->error());
        $this->expectException(\Error::class);
        $files[0][1]->path();
    }

    public function testAnEmptyFileInputIsNoFile(): void
    {
        [, $files] = $this->parse(self::body([['f', '', '']]), false);
        self::assertSame(\UPLOAD_ERR_NO_FILE, $files[0][1]->error());
    }

    #[DataProvider('feeding')]
    public function testABodyEndingInsideAFileGivesPartialAndRemovesTheData(bool $byteByByte): void
    {
        $body = self::body([['a', '1', null]]);
        $body = substr($body, 0, -\strlen("--" . self::B . "--\r\n")) . "--" . self::B . "\r\nContent-Disposition: form-data; name=\"f\"; filename=\"f.txt\"\r\n\r\nhalf a fi";
        $before = glob(sys_get_temp_dir() . '/kiln-upload-*') ?: [];
        [$fields, $files] = $this->parse($body, $byteByByte);
        self::assertSame([['a', '1']], $fields);
        self::assertSame(\UPLOAD_ERR_PARTIAL, $files[0][1]->error());
        self::assertSame(0, $files[0][1]->size());
        self::assertSame($before, glob(sys_get_temp_dir() . '/kiln-upload-*') ?: []);
    }

    public function testAnEmptyBodyHasNoParts(): void
    {
        self::assertSame([[], []], $this->parse('', false));
    }

    /** @return iterable<string, array{string, int}> */
    public static function malformed(): iterable
    {
        $b = '--' . self::B;
        $cd = "Content-Disposition: form-data; name=\"a\"";
        yield 'no boundary at all' => ["just text\r\n", 400];
        yield 'no closing boundary' => ["$b\r\n$cd\r\n\r\nvalue", 400];
        yield 'ends in the headers' => ["$b\r\n$cd\r\n", 400];
        yield 'garbage after the boundary' => ["$b junk\r\n$cd\r\n\r\nv\r\n$b--", 400];
        yield 'no Content-Disposition' => ["$b\r\nContent-Type: text/plain\r\n\r\nv\r\n$b--", 400];
        yield 'no headers at all' => ["$b\r\n\r\nv\r\n$b--", 400];
        yield 'not form-data' => ["$b\r\nContent-Disposition: attachment; name=\"a\"\r\n\r\nv\r\n$b--", 400];
        yield 'no name' => ["$b\r\nContent-Disposition: form-data; filename=\"a\"\r\n\r\nv\r\n$b--", 400];
        yield 'header without colon' => ["$b\r\n$cd\r\nBogus\r\n\r\nv\r\n$b--", 400];
        yield 'obs-fold' => ["$b\r\n$cd\r\n folded\r\n\r\nv\r\n$b--", 400];
        yield 'NUL in a header' => ["$b\r\n$cd\r\nX: a\0b\r\n\r\nv\r\n$b--", 400];
        yield 'unterminated quote' => ["$b\r\nContent-Disposition: form-data; name=\"a\r\n\r\nv\r\n$b--", 400];
        yield 'huge part header' => ["$b\r\n$cd\r\nX: " . str_repeat('a', 9000) . "\r\n\r\nv\r\n$b--", 413];
        yield 'too many fields' => [str_repeat("$b\r\n$cd\r\n\r\nv\r\n", 4) . "$b--", 413];
        yield 'too many files' => [str_repeat("$b\r\n$cd; filename=\"f\"\r\n\r\nv\r\n", 3) . "$b--", 413];
        yield 'fields too big' => ["$b\r\n$cd\r\n\r\n" . str_repeat('v', 101) . "\r\n$b--", 413];
    }

    #[DataProvider('malformed')]
    public function testMalformedBodiesAreRefusedWholeAndByteByByte(string $body, int $status): void
    {
        foreach ([false, true] as $byteByByte) {
            $before = glob(sys_get_temp_dir() . '/kiln-upload-*') ?: [];
            try {
                $this->parse($body, $byteByByte, new BodyLimits(fields: 3, formBytes: 100, files: 2));
                self::fail('accepted: ' . json_encode($body));
            } catch (BadRequestBodyException $e) {
                self::assertSame($status, $e->getCode(), $e->getMessage());
            }
            self::assertSame($before, glob(sys_get_temp_dir() . '/kiln-upload-*') ?: [], 'temporary files left behind');
        }
    }

    /** @return iterable<string, array{string, ?string}> */
    public static function contentTypes(): iterable
    {
        yield 'token' => ['multipart/form-data; boundary=abc-123', 'abc-123'];
        yield 'quoted with space' => ['multipart/form-data; charset=utf-8; BOUNDARY="a b:c"', 'a b:c'];
        yield 'missing' => ['multipart/form-data', null];
        yield 'empty' => ['multipart/form-data; boundary=', null];
        yield 'too long' => ['multipart/form-data; boundary=' . str_repeat('a', 71), null];
        yield 'ends in a space' => ['multipart/form-data; boundary="abc "', null];
        yield 'bad character' => ['multipart/form-data; boundary="a<b"', null];
    }

    #[DataProvider('contentTypes')]
    public function testTheBoundaryIsTakenFromTheContentTypeAndValidated(string $contentType, ?string $expected): void
    {
        if ($expected === null) {
            $this->expectException(BadRequestBodyException::class);
        }
        self::assertSame($expected, MultipartParser::boundary($contentType));
    }

    public function testALargeFileIsStreamedInPieces(): void
    {
        $data = random_bytes(300000);
        $body = self::body([['f', $data, 'r.bin']]);
        $parser = new MultipartParser(self::B);
        foreach (str_split($body, 8191) as $piece) {
            $parser->feed($piece);
        }
        [, $files] = $parser->finish();
        $this->uploads[] = $files[0][1];
        self::assertSame(md5($data), md5_file($files[0][1]->path()));
    }
}
