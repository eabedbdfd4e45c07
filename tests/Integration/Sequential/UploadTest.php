<?php

declare(strict_types=1);

namespace Kiln\Tests\Integration\Sequential;

/** is_uploaded_file() and move_uploaded_file() accept this request's uploads, and only those. */
final class UploadTest extends SequentialTestCase
{
    public function testMoveUploadedFileMovesTheUploadAndRefusesOtherFiles(): void
    {
        [$type, $body] = self::multipart([['doc', 'report.txt', 'the uploaded content']]);
        $result = self::json($this->request('POST', '/upload.php', ['Content-Type' => $type], $body));
        self::assertTrue($result['is_uploaded']);
        self::assertTrue($result['moved']);
        self::assertSame('the uploaded content', $result['content']);
        self::assertFalse($result['still_uploaded'], 'a moved file is no longer an upload');
        self::assertFalse($result['fake_is_uploaded'], 'a file that was not uploaded is refused');
        self::assertFalse($result['fake_moved']);
        $file = $result['file'];
        self::assertIsArray($file);
        self::assertSame('report.txt', $file['name']);
        self::assertSame(20, $file['size']);
    }

    public function testAnUploadOfAnEarlierRequestIsNoLongerAccepted(): void
    {
        [$type, $body] = self::multipart([['doc', 'a.txt', 'x']]);
        $dump = self::json($this->request('POST', '/dump.php', ['Content-Type' => $type], $body));
        $files = $dump['files'];
        self::assertIsArray($files);
        $path = $files['doc']['tmp_name'];
        self::assertIsString($path);
        $check = self::json($this->get('/uploaded-check.php?path=' . rawurlencode($path)));
        self::assertFalse($check['is_uploaded']);
        // Checked after a later request: the removal follows the response of its own.
        self::assertFileDoesNotExist($path, 'an upload the script did not move is removed when the request ends');
    }
}
