<?php
function dev_fixture_count(): int
{
    static $count = 0;
    return ++$count;
}
