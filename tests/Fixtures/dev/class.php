<?php
final class DevFixtureThing
{
}
echo 'class';
